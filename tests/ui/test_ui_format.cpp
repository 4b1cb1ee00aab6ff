// The shared display strings of ui/format.h: what the status bar says of a file's weights.
#include <QTest>

#include "ui/format.h"

class TestFormat : public QObject {
    Q_OBJECT
private slots:
    // Layers of one type read as it, with a head of another named after it; a file whose layers
    // mix types (Gemma's Q4_K_M: Q5_0 rows where 256-blocks do not fit, Q4_K, Q6_K, some Q8_0) reads
    // "mixed", the largest share first, not as its first matrix's type.
    void weightTypesSayMixed() {
        workbench::ModelInfo one;
        one.weight_type = "q4_1";
        one.weight_types = {{"q4_1", 210, 63u << 20}, {"q8_0", 1, 28u << 20}};
        one.layer_weight_types = {"q4_1"};
        one.output_weight_type = "q8_0";
        QCOMPARE(fmt::weightTypes(one), QStringLiteral("q4_1, head q8_0"));
        one.output_weight_type = "q4_1";
        QCOMPARE(fmt::weightTypes(one), QStringLiteral("q4_1"));
        workbench::ModelInfo gemma;
        gemma.weight_type = "q5_0";
        gemma.weight_types = {{"q4_k", 27, 12u << 20}, {"q5_0", 81, 41u << 20}, {"q6_k", 9, 9u << 20}, {"q8_0", 10, 171u << 20}};
        gemma.layer_weight_types = {"q4_k", "q5_0", "q6_k"};
        gemma.output_weight_type = "q8_0";
        QCOMPARE(fmt::weightTypes(gemma), QStringLiteral("mixed: q5_0, q4_k, q6_k, head q8_0"));
        workbench::ModelInfo remote;   // a server's model: no breakdown
        remote.weight_type = "q4_k";
        QCOMPARE(fmt::weightTypes(remote), QStringLiteral("q4_k"));
    }
};

QTEST_APPLESS_MAIN(TestFormat)
#include "test_ui_format.moc"
