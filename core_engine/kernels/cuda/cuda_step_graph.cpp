// A decode step as one CUDA graph, and the pinned staging every upload of a step goes through.
// Launching a decode step's few hundred small kernels one by one costs the host more than the
// device spends running them; captured, they go as one launch. The step's operations are
// captured as the model calls them (the host still plans each layer: block tables, spans), and
// the graph replaces the previous one of the same step size in place (cudaGraphExecUpdate: the
// same kernels with new arguments — plan sizes, splits) or is instantiated anew when its shape
// changed. Inputs come from pinned staging regions that stay untouched until the step ends, so
// the graph's copies read this step's values when it runs; the outputs (logits, or each row's
// best) go to pinned memory and reach the caller's buffer once the step is done; a step whose uploads outgrew the staging
// makes it twice their size before the next one. Anything that needs the host mid-step (a
// policy kept on the host, a buffer that must grow) first runs what was captured so far and
// goes on uncaptured (leave_capture). WB_CUDA_GRAPHS=0 turns graphs off, and so does any failed
// capture: the step that met it reports the error, the next ones run uncaptured.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_backend_impl.h"
#include "kernels/cuda/cuda_status.h"

namespace workbench {
namespace {

std::atomic<int64_t> graph_steps{0};

}  // namespace

int64_t cuda_graph_steps() { return graph_steps.load(); }

bool CudaBackend::graphs_wanted() {
    const char* v = std::getenv("WB_CUDA_GRAPHS");
    return v == nullptr || std::string(v) != "0";
}

void CudaBackend::discard_capture() {
    if (!capturing_) return;
    capturing_ = false;
    cudaGraph_t graph = nullptr;
    if (cudaStreamEndCapture(stream_, &graph) == cudaSuccess && graph != nullptr) (void)cudaGraphDestroy(graph);
    (void)cudaGetLastError();
}

Status CudaBackend::fit_staging() {
    const size_t last = pinned_step_bytes_;
    pinned_step_bytes_ = 0;
    if (last <= pinned_capacity_) return Status::ok_status();
    // The last step's uploads did not fit at once (and ended its capture early): room for twice them.
    if (pinned_ != nullptr) (void)cudaFreeHost(pinned_);
    pinned_ = nullptr;
    pinned_capacity_ = 0;
    void* p = nullptr;
    WB_CUDA_RETURN_IF_ERROR(cudaMallocHost(&p, last * 2), "allocating pinned host memory for a step's inputs");
    pinned_ = static_cast<uint8_t*>(p);
    pinned_capacity_ = last * 2;
    return Status::ok_status();
}

void CudaBackend::begin_capture() {
    if (!graphs_ || !graph_kv_ || n_ > std::min(gemv_max_tokens_, kGraphMaxTokens)) return;
    if (!ensure_pinned_out()) {
        graphs_ = false;   // no pinned room for the outputs: steps run uncaptured
        return;
    }
    if (cudaStreamBeginCapture(stream_, cudaStreamCaptureModeRelaxed) != cudaSuccess) {
        (void)cudaGetLastError();
        graphs_ = false;
        return;
    }
    capturing_ = true;
}

Result<cudaGraph_t> CudaBackend::end_capture() {
    capturing_ = false;
    cudaGraph_t graph = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(stream_, &graph);
    if (ended == cudaSuccess) return graph;
    graphs_ = false;
    return cuda::check(ended, "capturing a step as a CUDA graph");
}

Status CudaBackend::leave_capture() {
    if (!capturing_) return Status::ok_status();
    WB_ASSIGN_OR_RETURN(cudaGraph_t graph, end_capture());
    cudaGraphExec_t exec = nullptr;
    cudaError_t e = cudaGraphInstantiate(&exec, graph, 0);
    if (e == cudaSuccess) e = cudaGraphLaunch(exec, stream_);
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream_);   // the one-off executable must be done before it goes
    if (exec != nullptr) (void)cudaGraphExecDestroy(exec);
    (void)cudaGraphDestroy(graph);
    if (e != cudaSuccess) graphs_ = false;   // so later steps do not lose their first operations alike
    return cuda::check(e, "running a step's captured operations");
}

Status CudaBackend::replay_step_graph() {
    WB_ASSIGN_OR_RETURN(cudaGraph_t graph, end_capture());
    if (!error_.ok()) {   // an operation failed while it was queued: the step is dropped, nothing of it runs
        (void)cudaGraphDestroy(graph);
        return Status::ok_status();
    }
    cudaGraphExec_t& exec = graph_execs_[n_];
    if (exec != nullptr) {
        cudaGraphExecUpdateResultInfo info{};
        if (cudaGraphExecUpdate(exec, graph, &info) != cudaSuccess) {   // another shape: instantiated anew below
            (void)cudaGetLastError();
            (void)cudaGraphExecDestroy(exec);
            exec = nullptr;
        }
    }
    cudaError_t e = cudaSuccess;
    if (exec == nullptr) e = cudaGraphInstantiate(&exec, graph, 0);
    (void)cudaGraphDestroy(graph);
    if (e != cudaSuccess) {
        exec = nullptr;
        graphs_ = false;
        return cuda::check(e, "instantiating a step's CUDA graph");
    }
    WB_CUDA_RETURN_IF_ERROR(cudaGraphLaunch(exec, stream_), "launching a step's CUDA graph");
    graph_steps.fetch_add(1);
    return Status::ok_status();
}

Status CudaBackend::sync(const char* what) {
    WB_RETURN_IF_ERROR(leave_capture());
    return cuda::check(cudaStreamSynchronize(stream_), what);
}

Result<uint8_t*> CudaBackend::pinned_region(size_t bytes) {
    const size_t need = (bytes + 15) / 16 * 16;
    pinned_step_bytes_ += need;
    if (pinned_used_ + need > pinned_capacity_) {
        // Earlier regions of this step may still be queued for copying: wait before reusing them.
        WB_RETURN_IF_ERROR(sync("the step's operations"));
        pinned_used_ = 0;
        if (need > pinned_capacity_) {
            if (pinned_ != nullptr) (void)cudaFreeHost(pinned_);
            pinned_ = nullptr;
            pinned_capacity_ = 0;
            const size_t capacity = std::max<size_t>(need * 2, size_t{1} << 18);
            void* p = nullptr;
            WB_CUDA_RETURN_IF_ERROR(cudaMallocHost(&p, capacity), "allocating pinned host memory for a step's inputs");
            pinned_ = static_cast<uint8_t*>(p);
            pinned_capacity_ = capacity;
        }
    }
    uint8_t* region = pinned_ + pinned_used_;
    pinned_used_ += need;
    return region;
}

Status CudaBackend::upload_staged(void* device, const void* host, size_t bytes, const char* what) {
    if (bytes == 0) return Status::ok_status();
    WB_ASSIGN_OR_RETURN(uint8_t* region, pinned_region(bytes));
    std::memcpy(region, host, bytes);
    return cuda::check(cudaMemcpyAsync(device, region, bytes, cudaMemcpyHostToDevice, stream_), what);
}

}  // namespace workbench
