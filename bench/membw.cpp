// workbench-membw: read bandwidth of this machine at several working-set sizes and thread
// counts, the denominator of the decode roofline in docs/BENCHMARKS.md (tok/s ceiling =
// bandwidth ÷ (weight bytes + context tokens × KV bytes per token)).
//   build/bin/workbench-membw [THREADS...]    (default: 1 and all cores)
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "workbench/metrics.h"

int main(int argc, char** argv) {
    std::vector<int> threads;
    for (int i = 1; i < argc; ++i) threads.push_back(std::atoi(argv[i]));
    if (threads.empty()) threads = {1, static_cast<int>(std::thread::hardware_concurrency())};
    const double sizes_mib[] = {1, 8, 24, 96, 144, 512, 2048};
    std::printf("| working set | %s |\n", "threads: GB/s");
    for (double mib : sizes_mib) {
        std::printf("| %6.0f MiB |", mib);
        for (int t : threads) {
            if (t < 1) continue;
            const double gb_s = workbench::measure_read_bandwidth_gb_s(static_cast<uint64_t>(mib * 1048576.0), t);
            std::printf(" %d: %6.1f |", t, gb_s);
        }
        std::printf("\n");
    }
    return 0;
}
