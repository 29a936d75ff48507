// Running a piece of a test in a child process: for behaviour that ends the process (a stack
// overflow reported as exit 3, a watchdog that dumps and exits) or that must not disturb the
// test binary (running out of threads). Shared by engine_test.cpp and hardening_test.cpp.
#pragma once

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace kccl::test {

/// Runs `body` in a child process with its stderr captured; returns (exit status — the exit
/// code, or 128 + the signal — and what it wrote to stderr). A child still running after
/// `limit_s` seconds is killed: status -1.
inline std::pair<int, std::string> in_child(void (*body)(), int limit_s = 60) {
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    std::fflush(nullptr);  // nothing buffered in the parent is written twice
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        body();
        std::_Exit(0);
    }
    close(fds[1]);
    std::string err;
    char buf[4096];
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(limit_s);
    int status = -1;
    for (;;) {
        pollfd p{fds[0], POLLIN, 0};
        if (poll(&p, 1, 100) > 0) {
            const ssize_t n = read(fds[0], buf, sizeof buf);
            if (n > 0) err.append(buf, size_t(n));
        }
        int st = 0;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            ssize_t n;
            while ((n = read(fds[0], buf, sizeof buf)) > 0) err.append(buf, size_t(n));
            status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            break;
        }
        if (std::chrono::steady_clock::now() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, nullptr, 0);
            break;
        }
    }
    close(fds[0]);
    return {status, err};
}

}  // namespace kccl::test
