// cuBLASLt in the "TN" form it prefers: in column-major terms y_c (n_out × n) = W_cᵀ · x_c, where
// W_c (k × n_out) and x_c (k × n) are the row-major W and x as stored; f32 accumulation.
// The library is opened when the first CUDA backend is made, not linked: a CPU run never loads its
// hundreds of megabytes, and a machine without it gets an error naming the file.
#include "kernels/cuda/lt_matmul.h"

#include <cublasLt.h>
#include <dlfcn.h>

#include <string>
#include <type_traits>

namespace workbench::cuda {
namespace {

constexpr size_t kWorkspaceBytes = size_t{32} << 20;
#define WB_STRINGIFY2(x) #x
#define WB_STRINGIFY(x) WB_STRINGIFY2(x)
// The major version the headers we built against name (the ABI the entry points follow).
constexpr const char* kLibrary = "libcublasLt.so." WB_STRINGIFY(CUBLAS_VER_MAJOR);

// The entry points used, resolved from the library once.
struct LtApi {
    decltype(&cublasLtCreate) create;
    decltype(&cublasLtDestroy) destroy;
    decltype(&cublasLtGetStatusName) status_name;
    decltype(&cublasLtGetStatusString) status_string;
    decltype(&cublasLtMatmulDescCreate) desc_create;
    decltype(&cublasLtMatmulDescDestroy) desc_destroy;
    decltype(&cublasLtMatmulDescSetAttribute) desc_set;
    decltype(&cublasLtMatrixLayoutCreate) layout_create;
    decltype(&cublasLtMatrixLayoutDestroy) layout_destroy;
    decltype(&cublasLtMatmulPreferenceCreate) pref_create;
    decltype(&cublasLtMatmulPreferenceDestroy) pref_destroy;
    decltype(&cublasLtMatmulPreferenceSetAttribute) pref_set;
    decltype(&cublasLtMatmulAlgoGetHeuristic) heuristic;
    decltype(&cublasLtMatmul) matmul;
};

Result<const LtApi*> lt_api() {
    static const Result<LtApi> api = []() -> Result<LtApi> {
        void* lib = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            const char* why = dlerror();
            return error(StatusCode::unsupported, std::string("cuBLASLt cannot be loaded (") + (why ? why : kLibrary) +
                                                      "): the CUDA backend needs the CUDA toolkit's " + kLibrary);
        }
        LtApi a{};
        std::string missing;
        auto bind = [&](auto& fn, const char* name) {
            fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
            if (!fn) missing += std::string(missing.empty() ? "" : ", ") + name;
        };
        bind(a.create, "cublasLtCreate");
        bind(a.destroy, "cublasLtDestroy");
        bind(a.status_name, "cublasLtGetStatusName");
        bind(a.status_string, "cublasLtGetStatusString");
        bind(a.desc_create, "cublasLtMatmulDescCreate");
        bind(a.desc_destroy, "cublasLtMatmulDescDestroy");
        bind(a.desc_set, "cublasLtMatmulDescSetAttribute");
        bind(a.layout_create, "cublasLtMatrixLayoutCreate");
        bind(a.layout_destroy, "cublasLtMatrixLayoutDestroy");
        bind(a.pref_create, "cublasLtMatmulPreferenceCreate");
        bind(a.pref_destroy, "cublasLtMatmulPreferenceDestroy");
        bind(a.pref_set, "cublasLtMatmulPreferenceSetAttribute");
        bind(a.heuristic, "cublasLtMatmulAlgoGetHeuristic");
        bind(a.matmul, "cublasLtMatmul");
        if (!missing.empty()) return error(StatusCode::unsupported, std::string(kLibrary) + " lacks " + missing);
        return a;   // the library stays open for the process's life
    }();
    if (!api.ok()) return api.status();
    return &*api;
}

// Only called once lt_api() succeeded.
const LtApi& api() { return **lt_api(); }

Status check_lt(cublasStatus_t s, const std::string& what) {
    if (s == CUBLAS_STATUS_SUCCESS) return Status::ok_status();
    const StatusCode code = s == CUBLAS_STATUS_ALLOC_FAILED ? StatusCode::resource_exhausted
                            : s == CUBLAS_STATUS_NOT_SUPPORTED || s == CUBLAS_STATUS_ARCH_MISMATCH ? StatusCode::unsupported
                                                                                                  : StatusCode::internal;
    return error(code, "cuBLASLt " + what + ": " + api().status_string(s) + " (" + api().status_name(s) + ")");
}

cublasLtHandle_t lt(void* h) { return static_cast<cublasLtHandle_t>(h); }

}  // namespace

struct LtMatmul::Plan {
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
    cublasLtMatmulAlgo_t algo{};
    ~Plan() {
        if (c) api().layout_destroy(c);
        if (b) api().layout_destroy(b);
        if (a) api().layout_destroy(a);
        if (op) api().desc_destroy(op);
    }
};

Result<std::unique_ptr<LtMatmul>> LtMatmul::create(cudaStream_t stream) {
    WB_RETURN_IF_ERROR(lt_api().status());
    std::unique_ptr<LtMatmul> m(new LtMatmul());
    m->stream_ = stream;
    cublasLtHandle_t h = nullptr;
    WB_RETURN_IF_ERROR(check_lt(api().create(&h), "handle"));
    m->handle_ = h;
    WB_ASSIGN_OR_RETURN(m->workspace_, DeviceBuffer::allocate(kWorkspaceBytes));
    return m;
}

LtMatmul::~LtMatmul() {
    plans_.clear();
    if (handle_) api().destroy(lt(handle_));
}

Status LtMatmul::run(const uint16_t* w, const uint16_t* x, float* y, int64_t n_out, int64_t n, int64_t k, const float* bias) {
    auto& slot = plans_[{n_out, n, k, bias != nullptr}];
    if (!slot) {
        auto p = std::make_unique<Plan>();
        WB_RETURN_IF_ERROR(check_lt(api().desc_create(&p->op, CUBLAS_COMPUTE_32F, CUDA_R_32F), "matmul descriptor"));
        const cublasOperation_t transpose = CUBLAS_OP_T, keep = CUBLAS_OP_N;
        WB_RETURN_IF_ERROR(check_lt(api().desc_set(p->op, CUBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof transpose), "transpose A"));
        WB_RETURN_IF_ERROR(check_lt(api().desc_set(p->op, CUBLASLT_MATMUL_DESC_TRANSB, &keep, sizeof keep), "transpose B"));
        if (bias != nullptr) {
            // A bias per row of the column-major result (per output feature), in its type (f32).
            const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
            WB_RETURN_IF_ERROR(check_lt(api().desc_set(p->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue), "bias epilogue"));
            WB_RETURN_IF_ERROR(check_lt(api().desc_set(p->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias), "bias pointer"));
        }
        WB_RETURN_IF_ERROR(check_lt(api().layout_create(&p->a, CUDA_R_16BF, static_cast<uint64_t>(k), static_cast<uint64_t>(n_out), k), "layout of W"));
        WB_RETURN_IF_ERROR(check_lt(api().layout_create(&p->b, CUDA_R_16BF, static_cast<uint64_t>(k), static_cast<uint64_t>(n), k), "layout of x"));
        WB_RETURN_IF_ERROR(check_lt(api().layout_create(&p->c, CUDA_R_32F, static_cast<uint64_t>(n_out), static_cast<uint64_t>(n), n_out), "layout of y"));
        cublasLtMatmulPreference_t pref = nullptr;
        WB_RETURN_IF_ERROR(check_lt(api().pref_create(&pref), "preference"));
        const uint64_t ws = workspace_.size();
        cublasLtMatmulHeuristicResult_t found{};
        int n_found = 0;
        cublasStatus_t s = api().pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
        if (s == CUBLAS_STATUS_SUCCESS) s = api().heuristic(lt(handle_), p->op, p->a, p->b, p->c, p->c, pref, 1, &found, &n_found);
        api().pref_destroy(pref);
        WB_RETURN_IF_ERROR(check_lt(s, "algorithm heuristic"));
        if (n_found == 0)
            return error(StatusCode::unsupported, "cuBLASLt has no algorithm for a " + std::to_string(n) + "×" + std::to_string(k) + " by " +
                                                      std::to_string(k) + "×" + std::to_string(n_out) + " bf16 matmul");
        p->algo = found.algo;
        slot = std::move(p);
    }
    const Plan& p = *slot;
    // The plan is per shape, the bias per layer: its pointer is set for each call.
    if (bias != nullptr) WB_RETURN_IF_ERROR(check_lt(api().desc_set(p.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias), "bias pointer"));
    const float alpha = 1.0f, beta = 0.0f;
    return check_lt(api().matmul(lt(handle_), p.op, &alpha, w, p.a, x, p.b, &beta, y, p.c, y, p.c, &p.algo, workspace_.data(),
                                   workspace_.size(), stream_),
                    "matmul");
}

}  // namespace workbench::cuda
