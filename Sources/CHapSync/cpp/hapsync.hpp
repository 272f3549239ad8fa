// hapsync.hpp: a header-only C++17 wrapper over hapsync.h. Handles are owned by move-only
// objects (destroyed with them); a failing call throws hapsync::error with the library's message
// and status. Threads, memory and callbacks follow hapsync.h.
#ifndef HAPSYNC_HPP
#define HAPSYNC_HPP

#include <hapsync.h>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace hapsync {

/// A failed call: what hs_last_error_message() said, and the status.
class error : public std::runtime_error {
public:
    error(hs_status status, const char *message) : std::runtime_error(message), status_(status) {}
    hs_status status() const noexcept { return status_; }

private:
    hs_status status_;
};

/// Throws hapsync::error unless STATUS is HS_OK.
inline void check(hs_status status) {
    if (status != HS_OK) throw error(status, hs_last_error_message());
}

/// A move-only owner of one handle, destroyed with DESTROY.
template <typename T, void (*Destroy)(T *)>
class handle {
public:
    handle() = default;
    explicit handle(T *h) noexcept : h_(h) {}
    handle(handle &&other) noexcept : h_(std::exchange(other.h_, nullptr)) {}
    handle &operator=(handle &&other) noexcept {
        if (this != &other) { reset(); h_ = std::exchange(other.h_, nullptr); }
        return *this;
    }
    handle(const handle &) = delete;
    handle &operator=(const handle &) = delete;
    ~handle() { reset(); }
    T *get() const noexcept { return h_; }
    void reset() noexcept { if (h_) { Destroy(h_); h_ = nullptr; } }

private:
    T *h_ = nullptr;
};

/// A compiled pattern: from an AHAP file, or AHAP JSON in memory.
class pattern {
public:
    static pattern from_file(const std::string &path) {
        hs_pattern *p = nullptr;
        check(hs_pattern_load_file(path.c_str(), &p));
        return pattern(p);
    }
    static pattern from_json(const std::string &json) {
        hs_pattern *p = nullptr;
        check(hs_pattern_load_memory(json.data(), json.size(), &p));
        return pattern(p);
    }
    double duration() const { double d = 0; check(hs_pattern_duration(h_.get(), &d)); return d; }
    std::string diagnostics() const { return hs_pattern_diagnostics(h_.get()); }
    const hs_pattern *get() const noexcept { return h_.get(); }

private:
    explicit pattern(hs_pattern *p) : h_(p) {}
    handle<hs_pattern, hs_pattern_destroy> h_;
};

class engine;

/// Plays one pattern on an engine; stops when destroyed.
class player {
public:
    void start(double time = HS_TIME_IMMEDIATE) { check(hs_player_start(h_.get(), time)); }
    void stop(double time = HS_TIME_IMMEDIATE) { check(hs_player_stop(h_.get(), time)); }
    void pause(double time = HS_TIME_IMMEDIATE) { check(hs_player_pause(h_.get(), time)); }
    void resume(double time = HS_TIME_IMMEDIATE) { check(hs_player_resume(h_.get(), time)); }
    void seek(double offset) { check(hs_player_seek(h_.get(), offset)); }
    void loop(bool enabled, double end = 0) { check(hs_player_set_loop(h_.get(), enabled ? 1 : 0, end)); }
    void rate(double r) { check(hs_player_set_rate(h_.get(), r)); }
    void send_parameter(const std::string &id, float value, double time = HS_TIME_IMMEDIATE) {
        check(hs_player_send_parameter(h_.get(), id.c_str(), value, time));
    }
    void schedule_curve(const std::string &id, double time, const std::vector<std::pair<double, float>> &points) {
        if (points.empty()) throw error(HS_ERROR_INVALID_ARGUMENT, "a curve needs 1 to 16 points, got none");
        std::vector<double> times;
        std::vector<float> values;
        for (const auto &p : points) { times.push_back(p.first); values.push_back(p.second); }
        check(hs_player_schedule_curve(h_.get(), id.c_str(), time, times.data(), values.data(), points.size()));
    }
    hs_player *get() const noexcept { return h_.get(); }

private:
    friend class engine;
    explicit player(hs_player *p) : h_(p) {}
    handle<hs_player, hs_player_destroy> h_;
};

/// An engine: outputs as the CLI spells them ("trace:PATH", "evdev:auto", "none"; empty: the
/// environment's defaults). Stopped and destroyed with the object.
class engine {
public:
    explicit engine(const std::string &haptics = "", const std::string &audio = "") {
        hs_engine_config config{haptics.empty() ? nullptr : haptics.c_str(),
                                audio.empty() ? nullptr : audio.c_str()};
        hs_engine *e = nullptr;
        check(hs_engine_create(&config, &e));
        h_ = handle<hs_engine, hs_engine_destroy>(e);
    }
    void start() { check(hs_engine_start(h_.get())); }
    void stop() { check(hs_engine_stop(h_.get())); }
    double current_time() const { return hs_engine_current_time(h_.get()); }
    player make_player(const pattern &p) {
        hs_player *out = nullptr;
        check(hs_player_create(h_.get(), p.get(), &out));
        return player(out);
    }
    void play_feedback(const std::string &style, float intensity = 1) { check(hs_engine_play_feedback(h_.get(), style.c_str(), intensity)); }
    hs_statistics statistics() const { hs_statistics s{}; check(hs_engine_get_statistics(h_.get(), &s)); return s; }
    hs_engine *get() const noexcept { return h_.get(); }

private:
    handle<hs_engine, hs_engine_destroy> h_;
};

} // namespace hapsync

#endif // HAPSYNC_HPP
