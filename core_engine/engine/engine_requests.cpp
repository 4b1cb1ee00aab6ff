// The Engine's face of the step loop, and the helper its blocking calls (generate, run_batch,
// eval) use to drive it until their request is done.
#include <thread>

#include "engine/engine_impl.h"

namespace workbench {

void Engine::Impl::run_until_done(RequestHandle handle, const bool& done, const std::atomic<bool>* cancel) {
    bool cancelled = false;
    while (!done) {
        if (!cancelled && cancel && cancel->load(std::memory_order_relaxed)) {
            loop->cancel(handle);
            cancelled = true;
        }
        // A step that runs nothing waits for KV room another request will free; with only this
        // request in flight that cannot happen, so it is not a busy wait in practice.
        if (!loop->step().ran && !done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

RequestHandle Engine::submit(EngineRequest request, RequestEventCallback on_event) {
    return impl_->loop->submit(std::move(request), std::move(on_event));
}
void Engine::cancel(RequestHandle request) { impl_->loop->cancel(request); }
StepReport Engine::step() { return impl_->loop->step(); }
bool Engine::has_requests() const { return impl_->loop->has_requests(); }
void Engine::wait_for_requests(std::chrono::milliseconds timeout) { impl_->loop->wait_for_requests(timeout); }
const BatchOptions& Engine::loop_options() const { return impl_->loop->options(); }
LoopCounters Engine::loop_counters() const { return impl_->loop->counters(); }

Status Engine::set_loop_options(const BatchOptions& options) {
    if (options.max_batch_tokens < 1 || options.max_running < 1)
        return error(StatusCode::invalid_argument, "batch: max_batch_tokens and max_running must be at least 1 (got " +
                                                       std::to_string(options.max_batch_tokens) + ", " + std::to_string(options.max_running) + ")");
    if (impl_->loop->has_requests()) return error(StatusCode::unavailable, "batch options cannot change while requests run");
    impl_->loop->set_options(options);
    return Status::ok_status();
}

}  // namespace workbench
