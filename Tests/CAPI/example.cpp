// C++ on libhapsync through hapsync.hpp (RAII, exceptions): a time-scheduled start, a live
// parameter and a curve into a trace, and an error as an exception.
// Usage: example TRACE.jsonl   (prints "start=SECONDS", then "ok")
#include <hapsync.hpp>

#include <chrono>
#include <cstdio>
#include <thread>

int main(int argc, char **argv) {
    if (argc < 2) { std::fprintf(stderr, "usage: example TRACE.jsonl\n"); return 64; }
    try {
        hapsync::engine engine(std::string("trace:") + argv[1], "none");
        engine.start();
        auto pattern = hapsync::pattern::from_json(
            R"({"Version":1,"Pattern":[{"Event":{"Time":0,"EventType":"HapticTransient"}},)"
            R"({"Event":{"Time":0.05,"EventType":"HapticContinuous","EventDuration":0.3}}]})");
        auto player = engine.make_player(pattern);
        double start = engine.current_time() + 0.2;
        player.start(start);
        player.send_parameter("HapticIntensityControl", 0.5f, start + 0.1);
        player.schedule_curve("HapticSharpnessControl", start + 0.2, {{0.0, 0.0f}, {0.1, 0.3f}});
        std::printf("start=%.9f\n", start);
        std::this_thread::sleep_for(std::chrono::milliseconds(700));
        try {
            player.rate(1000);
            std::fprintf(stderr, "FAIL: a rate of 1000 was accepted\n");
            return 1;
        } catch (const hapsync::error &e) {
            if (e.status() != HS_ERROR_INVALID_ARGUMENT) { std::fprintf(stderr, "FAIL: status %d\n", e.status()); return 1; }
        }
        engine.stop();
    } catch (const hapsync::error &e) {
        std::fprintf(stderr, "FAIL: %s (status %d)\n", e.what(), e.status());
        return 1;
    }
    std::printf("ok\n");
    return 0;
}
