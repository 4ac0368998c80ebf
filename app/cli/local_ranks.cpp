#include "local_ranks.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <thread>

namespace baton::cli {

namespace {

// A port the kernel hands out as free on 127.0.0.1 (closed again: rank 0 binds it).
int freePort() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return 29500;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    socklen_t len = sizeof(a);
    int port = 29500;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
        port = ntohs(a.sin_port);
    ::close(fd);
    return port;
}

int exitCodeOf(int status) {
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return 1;
}

} // namespace

int runLocalRanks(int count, const std::vector<std::string>& args, int graceSeconds) {
    const int port = freePort();
    std::vector<std::string> argvText = {"/proc/self/exe", "train"};
    argvText.insert(argvText.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argvText)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    // Ctrl-C reaches every rank (one process group): each stops after its step and
    // rank 0 writes the checkpoint; this process waits for them.
    auto previousInt = std::signal(SIGINT, SIG_IGN);
    std::vector<pid_t> pids;
    std::cout.flush();
    std::cerr.flush();
    for (int r = 0; r < count; ++r) {
        const pid_t pid = ::fork();
        if (pid < 0) {
            std::cerr << "error: could not start rank " << r << ": " << std::strerror(errno)
                      << "\n";
            for (pid_t p : pids)
                ::kill(p, SIGKILL);
            for (pid_t p : pids)
                ::waitpid(p, nullptr, 0);
            std::signal(SIGINT, previousInt);
            return 1;
        }
        if (pid == 0) {
            std::signal(SIGINT, SIG_DFL);
            ::setenv("RANK", std::to_string(r).c_str(), 1);
            ::setenv("LOCAL_RANK", std::to_string(r).c_str(), 1);
            ::setenv("WORLD_SIZE", std::to_string(count).c_str(), 1);
            ::setenv("LOCAL_WORLD_SIZE", std::to_string(count).c_str(), 1);
            ::setenv("MASTER_ADDR", "127.0.0.1", 1);
            ::setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
            ::unsetenv("SLURM_NTASKS");
            ::execv("/proc/self/exe", argv.data());
            std::fprintf(stderr, "error: could not start rank %d: %s\n", r, std::strerror(errno));
            ::_exit(127);
        }
        pids.push_back(pid);
    }
    int result = 0;
    size_t running = pids.size();
    auto failedAt = std::chrono::steady_clock::time_point::max();
    bool killed = false;
    while (running > 0) {
        int status = 0;
        const pid_t pid = ::waitpid(-1, &status, WNOHANG);
        if (pid < 0 && errno != EINTR)
            break;
        if (pid <= 0) {
            if (!killed && std::chrono::steady_clock::now() > failedAt) {
                for (pid_t p : pids)
                    if (p > 0)
                        ::kill(p, SIGKILL);
                killed = true;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            continue;
        }
        for (auto& p : pids)
            if (p == pid) {
                p = -1;
                --running;
                const int code = exitCodeOf(status);
                if (code != 0 && result == 0)
                    result = code;
                // A failure (not a cancel, 130, after which rank 0 writes the checkpoint)
                // gives the others a grace period to notice it themselves.
                if (code != 0 && code != 130 && failedAt == failedAt.max())
                    failedAt =
                        std::chrono::steady_clock::now() + std::chrono::seconds(graceSeconds);
            }
    }
    std::signal(SIGINT, previousInt);
    return result;
}

} // namespace baton::cli
