// The device RMSNorm against the CPU kernel on random rows (the model widths of the default and
// the 1B shapes, and an odd width), out of place and in place, and with the residual add fused in
// front (add_rms_norm: the sum written back exactly, the norm of the sum): every element within
// 1e-5 relative.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "kernels/cpu/rms_norm.h"
#include "kernels/cuda/cuda_status.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/rms_norm.h"
#include "tests/cuda/cuda_check.h"
#include "workbench/backends.h"

using namespace workbench;

int main() {
    if (auto devices = cuda_devices(); !devices.ok()) cudacheck::skip(devices.status().message());
    struct Shape { int64_t rows, n; };
    for (const Shape s : {Shape{1, 576}, Shape{7, 2048}, Shape{3, 4097}}) {
        const size_t count = static_cast<size_t>(s.rows * s.n);
        const std::vector<float> x = cudacheck::random_floats(count, 3.0f, 1), w = cudacheck::random_floats(static_cast<size_t>(s.n), 1.0f, 2);
        std::vector<float> expected(count), got(count);
        rms_norm(x.data(), w.data(), expected.data(), s.rows, s.n, 1e-5f);
        auto dx = cuda::DeviceBuffer::allocate(count * 4), dw = cuda::DeviceBuffer::allocate(w.size() * 4), dy = cuda::DeviceBuffer::allocate(count * 4);
        CHECK(dx.ok() && dw.ok() && dy.ok(), "device buffers");
        if (cudacheck::failures) return cudacheck::finish();
        CHECK(dx->upload(x.data(), count * 4).ok() && dw->upload(w.data(), w.size() * 4).ok(), "uploads");
        for (bool in_place : {false, true}) {
            float* out = in_place ? dx->as<float>() : dy->as<float>();
            const Status launched = cuda::rms_norm(dx->as<float>(), dw->as<float>(), out, s.rows, s.n, 1e-5f, nullptr);
            CHECK(launched.ok(), launched.message());
            const Status done = cuda::check(cudaDeviceSynchronize(), "rms_norm");
            CHECK(done.ok(), done.message());
            CHECK((in_place ? *dx : *dy).download(got.data(), count * 4).ok(), "download");
            double worst = 0;
            for (size_t i = 0; i < count; ++i)
                worst = cudacheck::worse(worst, std::fabs(got[i] - expected[i]) / std::max(1.0, std::fabs(static_cast<double>(expected[i]))));
            std::printf("rms_norm %lldx%lld%s: worst relative error %.2e\n", static_cast<long long>(s.rows), static_cast<long long>(s.n),
                        in_place ? " in place" : "", worst);
            CHECK(worst <= 1e-5, "the device result departs from the CPU's");
        }
        // x + r into x, then its norm.
        const std::vector<float> r = cudacheck::random_floats(count, 2.0f, 3);
        std::vector<float> sum(count), got_sum(count);
        for (size_t i = 0; i < count; ++i) sum[i] = x[i] + r[i];
        rms_norm(sum.data(), w.data(), expected.data(), s.rows, s.n, 1e-5f);
        auto dr = cuda::DeviceBuffer::allocate(count * 4);
        CHECK(dr.ok() && dr->upload(r.data(), count * 4).ok() && dx->upload(x.data(), count * 4).ok(), "uploads");
        if (cudacheck::failures) return cudacheck::finish();
        const Status launched = cuda::add_rms_norm(dx->as<float>(), dr->as<float>(), dw->as<float>(), dy->as<float>(), s.rows, s.n, 1e-5f, nullptr);
        CHECK(launched.ok(), launched.message());
        const Status done = cuda::check(cudaDeviceSynchronize(), "add_rms_norm");
        CHECK(done.ok(), done.message());
        CHECK(dy->download(got.data(), count * 4).ok() && dx->download(got_sum.data(), count * 4).ok(), "download");
        double worst = 0;
        for (size_t i = 0; i < count; ++i)
            worst = cudacheck::worse(worst, std::fabs(got[i] - expected[i]) / std::max(1.0, std::fabs(static_cast<double>(expected[i]))));
        std::printf("add_rms_norm %lldx%lld: worst relative error %.2e\n", static_cast<long long>(s.rows), static_cast<long long>(s.n), worst);
        CHECK(got_sum == sum, "the residual sum written back differs from x + r");
        CHECK(worst <= 1e-5, "the fused add + norm departs from the CPU's");
    }
    return cudacheck::finish();
}
