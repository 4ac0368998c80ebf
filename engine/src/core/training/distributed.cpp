#include "training/distributed.h"

#include "training/distributed_config.h"

#include <chrono>
#include <cstdlib>
#include <exception>

#define BATON_C10D (BATON_WITH_GLOO || BATON_WITH_NCCL)
#if BATON_WITH_GLOO
#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO
#endif
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif
#if BATON_C10D
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#endif
#if BATON_WITH_NCCL
#ifndef USE_C10D_NCCL
#define USE_C10D_NCCL
#endif
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace baton::engine {

std::string distributedBackends() {
    std::string names;
#if BATON_WITH_GLOO
    names += "gloo";
#endif
#if BATON_WITH_NCCL
    names += names.empty() ? "nccl" : ", nccl";
#endif
    return names;
}

#if BATON_C10D

namespace {

using Clock = std::chrono::steady_clock;

// The first line of a LibTorch or Gloo message, without its source location.
std::string firstLine(const std::exception& e) {
    std::string s = e.what();
    if (auto* c = dynamic_cast<const c10::Error*>(&e))
        s = c->what_without_backtrace();
    s = s.substr(0, s.find('\n'));
    if (s.size() > 2 && s.front() == '[') {
        const size_t close = s.find("] ");
        if (close != std::string::npos && close < 200)
            s = s.substr(close + 2);
    }
    return s;
}

Error peerFailed(int rank, const std::string& doing, const std::exception& e, int timeout) {
    return makeError(ErrorCode::PeerFailed,
                     "rank " + std::to_string(rank) + ": " + doing +
                         " failed: another rank left the run or stayed silent for " +
                         std::to_string(timeout) + " s (" + firstLine(e) +
                         "); restart every rank with --resume to continue from the last "
                         "checkpoint");
}

std::vector<uint8_t> bytes(const std::string& s) {
    return {s.begin(), s.end()};
}

std::string text(const std::vector<uint8_t>& b) {
    return {b.begin(), b.end()};
}

[[maybe_unused]] bool loopback(const std::string& host) {
    return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1";
}

} // namespace

struct RankGroup::Impl {
    DistributedConfig config;
    bool cuda = false;
    torch::Device device{torch::kCPU};
    c10::intrusive_ptr<c10d::TCPStore> store;
#if BATON_WITH_GLOO
    c10::intrusive_ptr<c10d::ProcessGroupGloo> gloo;
#endif
#if BATON_WITH_NCCL
    c10::intrusive_ptr<c10d::ProcessGroupNCCL> nccl;
#endif

    std::chrono::milliseconds timeout() const {
        return std::chrono::milliseconds(int64_t(config.timeoutSeconds) * 1000);
    }
    c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& t) {
#if BATON_WITH_NCCL
        if (nccl)
            return nccl->allreduce(t);
#endif
#if BATON_WITH_GLOO
        if (gloo)
            return gloo->allreduce(t);
#endif
        throw std::runtime_error("no process group for this device");
    }
};

RankGroup::RankGroup(std::unique_ptr<Impl> impl)
    : d(std::move(impl)) {}
RankGroup::~RankGroup() = default;

int RankGroup::rank() const {
    return d->config.rank;
}
int RankGroup::size() const {
    return d->config.worldSize;
}

Result<std::unique_ptr<RankGroup>> RankGroup::connect(const DistributedConfig& config,
                                                      const torch::Device& device) {
    if (auto r = validateDistributed(config); !r)
        return r.error();
    auto impl = std::make_unique<Impl>();
    impl->config = config;
    impl->cuda = device.is_cuda();
    impl->device = device;
    const bool haveBackend = impl->cuda ? BATON_WITH_NCCL : BATON_WITH_GLOO;
    if (!haveBackend)
        return makeError(ErrorCode::Unsupported,
                         std::string("distributed training on ") +
                             (impl->cuda ? "CUDA needs a build with NCCL" : "CPUs needs Gloo") +
                             "; this build has " +
                             (distributedBackends().empty() ? "neither" : distributedBackends()));
    const std::string where = config.masterAddr + ":" + std::to_string(config.masterPort);
    try {
        c10d::TCPStoreOptions o;
        o.port = static_cast<uint16_t>(config.masterPort);
        o.isServer = config.rank == 0;
        o.numWorkers = static_cast<size_t>(config.worldSize);
        o.waitWorkers = true;
        o.timeout = impl->timeout();
        impl->store = c10::make_intrusive<c10d::TCPStore>(config.masterAddr, o);
    } catch (const std::exception& e) {
        return makeError(ErrorCode::PeerFailed,
                         "rank " + std::to_string(config.rank) + ": the rendezvous at " + where +
                             " failed within " + std::to_string(config.timeoutSeconds) + " s (" +
                             firstLine(e) + ")" +
                             (config.rank == 0
                                  ? ": is the port free, and were all " +
                                        std::to_string(config.worldSize) + " ranks started?"
                                  : ": is rank 0 running there?"));
    }
    try {
#if BATON_WITH_NCCL
        if (impl->cuda) {
            auto options = c10d::ProcessGroupNCCL::Options::create();
            options->timeout = impl->timeout();
            impl->nccl = c10::make_intrusive<c10d::ProcessGroupNCCL>(impl->store, config.rank,
                                                                     config.worldSize, options);
        }
#endif
#if BATON_WITH_GLOO
        if (!impl->cuda) {
            auto options = c10d::ProcessGroupGloo::Options::create(impl->timeout());
            // On one machine the loopback interface; else GLOO_SOCKET_IFNAME's interface,
            // or the address this machine's host name resolves to.
            if (loopback(config.masterAddr))
                options->devices.push_back(
                    c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
            else if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"))
                options->devices.push_back(
                    c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
            else
                options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
            options->threads = 2;
            impl->gloo = c10::make_intrusive<c10d::ProcessGroupGloo>(impl->store, config.rank,
                                                                     config.worldSize, options);
        }
#endif
    } catch (const std::exception& e) {
        return peerFailed(config.rank, "connecting the ranks", e, config.timeoutSeconds);
    }
    return std::unique_ptr<RankGroup>(new RankGroup(std::move(impl)));
}

Result<void> RankGroup::agree(const std::string& what, const std::string& fingerprint) {
    const std::string prefix = "baton/agree/" + what + "/";
    try {
        d->store->set(prefix + std::to_string(rank()), bytes(fingerprint));
        std::vector<std::string> keys;
        for (int r = 0; r < size(); ++r)
            keys.push_back(prefix + std::to_string(r));
        d->store->wait(keys, d->timeout());
        const std::string reference = text(d->store->get(keys[0]));
        std::string differ;
        for (int r = 1; r < size(); ++r)
            if (text(d->store->get(keys[size_t(r)])) != reference)
                differ += (differ.empty() ? "" : ", ") + std::to_string(r);
        if (!differ.empty())
            return makeError(ErrorCode::ConfigMismatch,
                             "rank " + std::to_string(rank()) + ": rank" +
                                 (differ.find(',') == std::string::npos ? " " : "s ") + differ +
                                 " started with another " + what +
                                 " than rank 0: start every rank with the same command, "
                                 "model and corpus");
    } catch (const std::exception& e) {
        return peerFailed(rank(), "comparing the " + what, e, d->config.timeoutSeconds);
    }
    return {};
}

Result<void> RankGroup::finish(const std::string& key, const std::string& errorMessage) {
    try {
        d->store->set("baton/done/" + key, bytes(errorMessage.empty() ? "ok" : errorMessage));
    } catch (const std::exception& e) {
        return peerFailed(rank(), "announcing " + key, e, d->config.timeoutSeconds);
    }
    return {};
}

Result<void> RankGroup::await(const std::string& key) {
    try {
        // No time limit: rank 0's setup takes what it takes; if its process ends, the
        // store (served by it) closes and the wait fails at once.
        d->store->wait({"baton/done/" + key}, std::chrono::hours(24 * 7));
        const std::string outcome = text(d->store->get("baton/done/" + key));
        if (outcome != "ok")
            return makeError(ErrorCode::PeerFailed, "rank 0 failed: " + outcome);
    } catch (const std::exception& e) {
        return peerFailed(rank(), "waiting for rank 0's " + key, e, d->config.timeoutSeconds);
    }
    return {};
}

Result<void> RankGroup::sum(const std::vector<torch::Tensor>& tensors) {
    constexpr int64_t kBucketBytes = 25 << 20;
    struct Bucket {
        std::vector<torch::Tensor> parts;
        std::vector<at::Tensor> flat; // one tensor: the collective's argument
        c10::intrusive_ptr<c10d::Work> work;
    };
    std::vector<Bucket> buckets;
    try {
        torch::NoGradGuard noGrad;
        auto launch = [&](Bucket& b) {
            if (b.parts.size() == 1) {
                b.flat = {b.parts[0].view({-1})};
            } else {
                std::vector<torch::Tensor> views;
                for (auto& p : b.parts)
                    views.push_back(p.view({-1}));
                b.flat = {torch::cat(views)};
            }
            b.work = d->allreduce(b.flat);
        };
        Bucket open;
        int64_t openBytes = 0;
        for (const auto& t : tensors) {
            const int64_t n = t.numel() * int64_t(t.element_size());
            if (!open.parts.empty() &&
                (openBytes + n > kBucketBytes || t.scalar_type() != open.parts[0].scalar_type())) {
                buckets.push_back(std::move(open));
                launch(buckets.back());
                open = Bucket{};
                openBytes = 0;
            }
            open.parts.push_back(t);
            openBytes += n;
        }
        if (!open.parts.empty()) {
            buckets.push_back(std::move(open));
            launch(buckets.back());
        }
        for (auto& b : buckets) {
            b.work->wait(d->timeout());
            if (b.parts.size() == 1)
                continue; // summed in place
            int64_t at = 0;
            for (auto& p : b.parts) {
                p.view({-1}).copy_(b.flat[0].narrow(0, at, p.numel()));
                at += p.numel();
            }
        }
    } catch (const std::exception& e) {
        return peerFailed(rank(), "summing the gradients", e, d->config.timeoutSeconds);
    }
    return {};
}

Result<void> RankGroup::sumValues(std::vector<double>& values) {
    auto t = torch::tensor(values, torch::kFloat64).to(d->device);
    if (auto r = sum({t}); !r)
        return r;
    t = t.cpu();
    values.assign(t.data_ptr<double>(), t.data_ptr<double>() + values.size());
    return {};
}

double RankGroup::bytesPerSum(int64_t elements) const {
    const double n = size();
    return 2.0 * (n - 1.0) / n * double(elements) * 4.0;
}

#else // built without Gloo or NCCL: no distributed engine

struct RankGroup::Impl {};
RankGroup::RankGroup(std::unique_ptr<Impl> impl)
    : d(std::move(impl)) {}
RankGroup::~RankGroup() = default;
int RankGroup::rank() const {
    return 0;
}
int RankGroup::size() const {
    return 1;
}
Result<std::unique_ptr<RankGroup>> RankGroup::connect(const DistributedConfig&,
                                                      const torch::Device&) {
    return makeError(ErrorCode::Unsupported,
                     "this build of Baton has no distributed engine (it was built without "
                     "Gloo: install libgloo-dev and build again)");
}
Result<void> RankGroup::agree(const std::string&, const std::string&) {
    return {};
}
Result<void> RankGroup::finish(const std::string&, const std::string&) {
    return {};
}
Result<void> RankGroup::await(const std::string&) {
    return {};
}
Result<void> RankGroup::sum(const std::vector<torch::Tensor>&) {
    return {};
}
Result<void> RankGroup::sumValues(std::vector<double>&) {
    return {};
}
double RankGroup::bytesPerSum(int64_t) const {
    return 0;
}

#endif

} // namespace baton::engine
