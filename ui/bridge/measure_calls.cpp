// The measurements through workbench/measure.h. Until that header is part of the engine, the
// calls say so instead (the pages show the message); the build never depends on it being there.
#include <QJsonDocument>
#include <QJsonObject>

#include "ui/bridge/measure_types.h"

#if __has_include("workbench/measure.h")
#include "workbench/measure.h"
#define WB_HAVE_MEASURE 1
#else
#define WB_HAVE_MEASURE 0
#endif

namespace measure {

#if WB_HAVE_MEASURE
#error "fill in after measure.h lands"
#else

bool available() { return false; }

namespace {
workbench::Status missing() {
    return workbench::error(workbench::StatusCode::unsupported,
                            "this build's engine has no measurements yet (workbench/measure.h)");
}
}  // namespace

workbench::Result<QualityFigures> evaluateQuality(workbench::Engine&, workbench::Engine&,
                                                  const std::vector<workbench::TokenId>&, int, int,
                                                  const std::function<void(double)>&, const std::atomic<bool>*) {
    return missing();
}

workbench::Result<BenchPoint> measureBatch(workbench::Engine&, int, int, int, uint64_t, const std::atomic<bool>*) {
    return missing();
}

#endif

}  // namespace measure
