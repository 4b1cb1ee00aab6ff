// The machine measurements behind the roofline figures (bench's roofline %, the GUI's roofline
// picture): each returns a finite, plausible rate on this machine, measured with the instruction
// set the kernels in use run.
#include <QTest>

#include <cmath>

#include "kernels/cpu/cpu_features.h"
#include "workbench/metrics.h"

using namespace workbench;

class TestMachineMeasures : public QObject {
    Q_OBJECT
private slots:
    void compute_peaks_are_plausible() {
        const ComputePeaks one = measure_compute_peaks(1);
        qInfo("kernels %s: fp32 %.1f GFLOP/s, int8 %.1f GOP/s (1 thread)", group_kernels_name(cpu_group_kernels()), one.fp32_gflop_s, one.int8_gop_s);
        // A core of this decade does 1-1000 GFLOP/s of fp32 FMA and at least as many int8 ops.
        QVERIFY(std::isfinite(one.fp32_gflop_s) && one.fp32_gflop_s > 1 && one.fp32_gflop_s < 1000);
        QVERIFY(std::isfinite(one.int8_gop_s) && one.int8_gop_s > 1 && one.int8_gop_s < 4000);
    }

    void read_bandwidth_is_plausible() {
        const double gb_s = measure_read_bandwidth_gb_s(8ull << 20, 1, 3, 50);
        qInfo("read bandwidth at 8 MiB, 1 thread: %.1f GB/s", gb_s);
        QVERIFY(std::isfinite(gb_s) && gb_s > 0.5 && gb_s < 2000);
    }
};

QTEST_APPLESS_MAIN(TestMachineMeasures)
#include "test_machine_measures.moc"
