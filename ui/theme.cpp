// Resolving and applying the theme; the portal is asked once at start (and listened to for
// changes) with a short timeout, so a desktop without one costs nothing and shows no error.
#include "ui/theme.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QMenu>
#include <QSettings>
#include <QStyle>
#include <QStyleFactory>

#include <QDBusConnection>
#include <QDBusMessage>
#include <QDBusVariant>

namespace {

const QString kSettingsKey = QStringLiteral("view/theme");
const QString kPortalService = QStringLiteral("org.freedesktop.portal.Desktop");
const QString kPortalPath = QStringLiteral("/org/freedesktop/portal/desktop");
const QString kPortalInterface = QStringLiteral("org.freedesktop.portal.Settings");
const QString kAppearance = QStringLiteral("org.freedesktop.appearance");
const QString kColorScheme = QStringLiteral("color-scheme");

// Read answers v (ReadOne) or a variant in a variant (Read, older portals): unwrap to the number.
QVariant unwrap(QVariant v) {
    while (v.canConvert<QDBusVariant>() && v.userType() == qMetaTypeId<QDBusVariant>()) v = qvariant_cast<QDBusVariant>(v).variant();
    return v;
}

std::optional<bool> fromScheme(const QVariant& value) {
    bool ok = false;
    const uint scheme = unwrap(value).toUInt(&ok);
    if (!ok) return std::nullopt;
    return scheme == 1;  // 1 prefer dark, 2 prefer light, 0 no preference (light)
}

}  // namespace

ThemeController::ThemeController(QObject* parent) : QObject(parent) {
    m_mode = modeFromName(QSettings().value(kSettingsKey).toString());
    QDBusConnection bus = QDBusConnection::sessionBus();
    if (bus.isConnected())
        bus.connect(kPortalService, kPortalPath, kPortalInterface, QStringLiteral("SettingChanged"), this,
                    SLOT(onPortalSettingChanged(QString, QString, QDBusVariant)));
    apply(resolve());
}

QString ThemeController::modeName(Mode mode) {
    switch (mode) {
    case Mode::Light: return QStringLiteral("light");
    case Mode::Dark: return QStringLiteral("dark");
    case Mode::System: break;
    }
    return QStringLiteral("system");
}

ThemeController::Mode ThemeController::modeFromName(const QString& name) {
    if (name == QLatin1String("light")) return Mode::Light;
    if (name == QLatin1String("dark")) return Mode::Dark;
    return Mode::System;
}

std::optional<bool> ThemeController::environmentOverride() {
    const QByteArray env = qgetenv("WORKBENCH_THEME").trimmed().toLower();
    if (env == "dark") return true;
    if (env == "light") return false;
    return std::nullopt;
}

std::optional<bool> ThemeController::portalPrefersDark(int timeoutMs) {
    QDBusConnection bus = QDBusConnection::sessionBus();
    if (!bus.isConnected()) return std::nullopt;
    // ReadOne is the present call; portals before version 2 only have Read.
    for (const char* method : {"ReadOne", "Read"}) {
        QDBusMessage call = QDBusMessage::createMethodCall(kPortalService, kPortalPath, kPortalInterface, QString::fromLatin1(method));
        call << kAppearance << kColorScheme;
        const QDBusMessage reply = bus.call(call, QDBus::Block, timeoutMs);
        if (reply.type() == QDBusMessage::ReplyMessage && !reply.arguments().isEmpty())
            return fromScheme(reply.arguments().constFirst());
        // No portal at all (or it timed out): the older call would fail the same way.
        if (reply.errorName() != QLatin1String("org.freedesktop.DBus.Error.UnknownMethod")) return std::nullopt;
    }
    return std::nullopt;
}

bool ThemeController::resolve() const {
    if (!m_chosenHere)
        if (const auto forced = environmentOverride()) return *forced;
    switch (m_mode) {
    case Mode::Light: return false;
    case Mode::Dark: return true;
    case Mode::System: break;
    }
    return portalPrefersDark().value_or(false);
}

QPalette ThemeController::palette(bool dark) {
    QStyle* fusion = QStyleFactory::create(QStringLiteral("Fusion"));
    QPalette p = fusion ? fusion->standardPalette() : QPalette();
    delete fusion;
    if (!dark) return p;
    const QColor window(0x2b, 0x2d, 0x30), base(0x1e, 0x1f, 0x22), text(0xe6, 0xe6, 0xe6), dim(0x80, 0x80, 0x80);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, QColor(0x26, 0x28, 0x2b));
    p.setColor(QPalette::ToolTipBase, QColor(0x3c, 0x3f, 0x41));
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText, QColor(0x8c, 0x8c, 0x8c));
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, QColor(0x3a, 0x3d, 0x41));
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, QColor(0xff, 0x6b, 0x6b));
    p.setColor(QPalette::Light, QColor(0x4a, 0x4d, 0x52));
    p.setColor(QPalette::Midlight, QColor(0x3f, 0x42, 0x46));
    p.setColor(QPalette::Mid, QColor(0x30, 0x32, 0x36));
    p.setColor(QPalette::Dark, QColor(0x1a, 0x1b, 0x1d));
    p.setColor(QPalette::Shadow, QColor(0x10, 0x10, 0x10));
    p.setColor(QPalette::Highlight, QColor(0x2f, 0x65, 0xca));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Link, QColor(0x8a, 0xb4, 0xf8));
    p.setColor(QPalette::LinkVisited, QColor(0xc5, 0x8a, 0xf9));
    for (QPalette::ColorRole role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
        p.setColor(QPalette::Disabled, role, dim);
    p.setColor(QPalette::Disabled, QPalette::Base, window);
    return p;
}

void ThemeController::apply(bool dark) {
    m_dark = dark;
    // Fusion draws every control from the palette (native styles keep their own colours).
    if (QApplication::style()->name().compare(QLatin1String("fusion"), Qt::CaseInsensitive) != 0)
        QApplication::setStyle(QStringLiteral("Fusion"));
    // Every widget gets a PaletteChange: charts and the transcript restyle themselves from it.
    QApplication::setPalette(palette(dark));
    // Qt tells top-level widgets only through their native window: one not shown yet (the main
    // window while it is being built) would keep the old palette and hand it to its children.
    for (QWidget* w : QApplication::topLevelWidgets()) {
        QEvent event(QEvent::ApplicationPaletteChange);
        QCoreApplication::sendEvent(w, &event);
    }
    emit changed(dark);
}

void ThemeController::setMode(Mode mode) {
    m_mode = mode;
    m_chosenHere = true;
    QSettings().setValue(kSettingsKey, modeName(mode));
    if (QAction* a = action(mode)) a->setChecked(true);
    apply(resolve());
}

QMenu* ThemeController::createMenu(QWidget* parent) {
    auto* menu = new QMenu(tr("&Theme"), parent);
    m_group = new QActionGroup(menu);
    m_group->setExclusive(true);
    const std::pair<Mode, QString> entries[] = {
        {Mode::Light, tr("&Light")}, {Mode::Dark, tr("&Dark")}, {Mode::System, tr("&System (the desktop's setting)")}};
    for (const auto& [mode, text] : entries) {
        QAction* a = menu->addAction(text);
        a->setCheckable(true);
        a->setChecked(mode == m_mode);
        a->setObjectName(QStringLiteral("theme") + (mode == Mode::Light ? QStringLiteral("Light")
                                                    : mode == Mode::Dark ? QStringLiteral("Dark")
                                                                         : QStringLiteral("System")));
        a->setData(static_cast<int>(mode));
        m_group->addAction(a);
        connect(a, &QAction::triggered, this, [this, mode = mode] { setMode(mode); });
    }
    return menu;
}

QAction* ThemeController::action(Mode mode) const {
    if (!m_group) return nullptr;
    for (QAction* a : m_group->actions())
        if (a->data().toInt() == static_cast<int>(mode)) return a;
    return nullptr;
}

void ThemeController::onPortalSettingChanged(const QString& group, const QString& key, const QDBusVariant& value) {
    if (group != kAppearance || key != kColorScheme || m_mode != Mode::System) return;
    if (!m_chosenHere && environmentOverride()) return;
    const std::optional<bool> dark = fromScheme(value.variant());
    if (dark && *dark != m_dark) apply(*dark);
}
