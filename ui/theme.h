// The application's theme: Light, Dark or System (View → Theme, kept in QSettings "view/theme",
// System by default). It resolves the choice to light or dark (WORKBENCH_THEME=dark|light first,
// then for System the desktop's color-scheme read through the freedesktop settings portal, else
// light), and applies it as the Fusion style with a light or dark QPalette. Widgets restyle from
// their palette (the chart theme, the transcript's colours), so charts made later follow too.
#pragma once

#include <QObject>
#include <QPalette>
#include <optional>

class QAction;
class QActionGroup;
class QDBusVariant;
class QMenu;
class QWidget;

class ThemeController : public QObject {
    Q_OBJECT
public:
    enum class Mode { System, Light, Dark };

    // Reads the saved choice and applies it at once (before the pages exist, so they start in it).
    explicit ThemeController(QObject* parent = nullptr);

    Mode mode() const { return m_mode; }
    bool isDark() const { return m_dark; }
    // Persists `mode` and applies it. An explicit choice wins over WORKBENCH_THEME from then on.
    void setMode(Mode mode);
    // "Theme" with Light, Dark, System as exclusive checkable actions (objectNames themeLight,
    // themeDark, themeSystem), checked as the present mode.
    QMenu* createMenu(QWidget* parent);
    QAction* action(Mode mode) const;

    // WORKBENCH_THEME=dark|light; nothing when unset or anything else.
    static std::optional<bool> environmentOverride();
    // The desktop's preference from org.freedesktop.appearance color-scheme (1 = prefer dark);
    // nothing without a session bus or a portal answering within `timeoutMs`.
    static std::optional<bool> portalPrefersDark(int timeoutMs = 250);
    static QPalette palette(bool dark);
    static QString modeName(Mode mode);
    static Mode modeFromName(const QString& name);

signals:
    void changed(bool dark);

private slots:
    // The portal's SettingChanged: the desktop switched its scheme while System is chosen.
    void onPortalSettingChanged(const QString& group, const QString& key, const QDBusVariant& value);

private:
    bool resolve() const;
    void apply(bool dark);

    Mode m_mode = Mode::System;
    bool m_dark = false;
    bool m_chosenHere = false;  // setMode was called: the user's pick outranks WORKBENCH_THEME
    QActionGroup* m_group = nullptr;
};
