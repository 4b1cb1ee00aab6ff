// Resident memory of this process, for the benchmark's memory check and the status bar.
#include <unistd.h>

#include <cstdio>

#include "workbench/metrics.h"

namespace workbench {

uint64_t process_resident_bytes() {
    FILE* f = std::fopen("/proc/self/statm", "r");
    if (!f) return 0;
    unsigned long long size = 0, resident = 0;
    const int n = std::fscanf(f, "%llu %llu", &size, &resident);
    std::fclose(f);
    if (n != 2) return 0;
    return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace workbench
