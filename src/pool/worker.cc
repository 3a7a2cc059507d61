#include "pool/worker.hpp"

#include <malloc.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "corral/sandbox.hpp"
#include "pool/frames.hpp"
#include "pool/lockdown.hpp"
#include "pool/startup_pages.hpp"
#include "sandbox/engine.hpp"
#include "sandbox/hosted.hpp"

namespace corral::pool {
namespace {

// Sandboxes kept idle between runs, across every tool set and bound.
constexpr std::size_t kIdleSandboxes = 4;

struct RunJob {
  std::uint64_t id = 0;
  bool eval = false;
  std::string code;
  std::vector<std::string> tools;
  sandbox::Options limits;
  std::string key;  // which cached sandboxes fit this job
};

// The run a cached sandbox is serving now; its tools read it to tag calls.
struct CurrentRun {
  std::atomic<std::uint64_t> id{0};
};

// A run's done message, and the value's JSON text apart (frames.hpp).
struct Done {
  json::object message;
  std::optional<std::string> value;
};

struct CachedSandbox {
  std::unique_ptr<sandbox::Sandbox> sandbox;
  std::shared_ptr<CurrentRun> current;
};

class Worker {
 public:
  explicit Worker(const WorkerSettings& settings)
      : fd_(settings.ipc_fd), max_frame_(settings.max_frame), reader_(settings.max_frame) {}

  int serve() {
    char buffer[64 * 1024];
    std::string body;
    while (true) {
      const ssize_t n = ::read(fd_, buffer, sizeof buffer);
      if (n == 0) return 0;  // the pool closed the socket: we are done
      if (n < 0) {
        if (errno == EINTR) continue;
        return 0;
      }
      reader_.append(buffer, static_cast<std::size_t>(n));
      while (true) {
        const FrameReader::Status status = reader_.next(body);
        if (status == FrameReader::Status::need_more) break;
        if (status == FrameReader::Status::oversized) return fail("oversized frame from the pool");
        std::optional<Message> message = parse_message(body);
        if (!message || message->tail) return fail("malformed frame from the pool");
        // A big request's text is not kept for the worker's lifetime, nor
        // while its run goes (handle() gives the run its own copy).
        if (body.capacity() > core::kKeptFrameBytes) std::string().swap(body);
        if (!handle(message->fields)) return fail("unexpected message from the pool");
      }
    }
  }

  void send(const json::object& message) { send_frame(encode_frame(message)); }

  // A run's answer that the pool would refuse as an oversized frame (and
  // kill this worker for) is answered as response_too_large instead: the
  // same run would be as large again anywhere, so it is not retryable.
  void send_done(const Done& done) {
    std::string frame = encode_frame(done.message, done.value);
    if (frame.size() - kFrameHeaderBytes <= max_frame_) {
      send_frame(std::move(frame));
      return;
    }
    const std::size_t size = frame.size() - kFrameHeaderBytes;
    frame.clear();
    frame.shrink_to_fit();
    json::object refused{{"t", "done"}, {"id", done.message.at("id")}};
    refused["failure"] =
        core::failure_to_object(Failure{FailureCode::response_too_large,
                                        "the run's answer is " + std::to_string(size) +
                                            " bytes as JSON, more than the pool's frame limit of " +
                                            std::to_string(max_frame_) + " bytes",
                                        nullptr});
    send(refused);
  }

  void send_frame(const std::string& frame) {
    std::lock_guard lock(write_mutex_);
    std::size_t written = 0;
    while (written < frame.size()) {
      const ssize_t n = ::send(fd_, frame.data() + written, frame.size() - written, MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR) continue;
        // The pool is gone; nothing we compute can reach anyone.
        ::_exit(0);
      }
      written += static_cast<std::size_t>(n);
    }
  }

 private:
  static int fail(const char* why) {
    std::fprintf(stderr, "corral worker: %s\n", why);
    return 2;
  }

  // Takes what a run needs out of `message` (a big code or payload string
  // is not held twice while the run goes on).
  bool handle(json::object& message) {
    const std::string_view type = *get_string(message, "t");
    const std::optional<std::uint64_t> id = get_count(message, "id");
    if (!id) return false;
    if (type == "run") return handle_run(*id, message);
    if (type == "answer") return handle_answer(*id, message);
    if (type == "cancel") {
      std::lock_guard lock(mutex_);
      if (auto it = active_.find(*id); it != active_.end()) {
        // The runner may not have reached the sandbox's run yet: a plain
        // cancel() would then be lost and the run go on to its timeout.
        sandbox::Hosted::cancel_including_next(*it->second);
      } else {
        // The run has not reached its sandbox yet (still queued for a
        // runner, or its sandbox is being built): it starts cancelled.
        if (cancelled_.size() > 4096) cancelled_.clear();
        cancelled_.insert(*id);
      }
      return true;
    }
    return false;
  }

  bool handle_run(std::uint64_t id, json::object& message) {
    RunJob job;
    job.id = id;
    const json::string* shape = get_string(message, "shape");
    const json::string* code = get_string(message, "code");
    const json::value* tools = message.if_contains("tools");
    const json::value* limits = message.if_contains("limits");
    if (!shape || !code || !tools || !tools->is_array() || !limits || !limits->is_object())
      return false;
    job.eval = *shape == "eval";
    job.code = std::string(code->data(), code->size());
    for (const json::value& tool : tools->get_array()) {
      if (!tool.is_string()) return false;
      job.tools.emplace_back(tool.get_string().data(), tool.get_string().size());
    }
    try {
      job.limits = limits_from_object(limits->get_object());
    } catch (const std::invalid_argument&) {
      return false;
    }
    job.key = json::serialize(*tools) + json::serialize(*limits);
    message.erase("code");  // last: an erase may move the object's other members
    {
      std::lock_guard lock(mutex_);
      jobs_.push_back(std::move(job));
      // Each waiting runner takes one job; start one more if they are all busy.
      if (jobs_.size() > idle_runners_) std::thread([this] { runner(); }).detach();
    }
    job_ready_.notify_one();
    return true;
  }

  bool handle_answer(std::uint64_t id, json::object& message) {
    const std::optional<std::uint64_t> call = get_count(message, "call");
    const json::value* ok = message.if_contains("ok");
    const json::string* payload = get_string(message, "payload");
    if (!call || !ok || !ok->is_bool() || !payload) return false;
    std::optional<sandbox::ToolReply> reply;
    {
      std::lock_guard lock(mutex_);
      auto it = calls_.find({id, *call});
      if (it == calls_.end()) return true;  // the run settled meanwhile
      reply = std::move(it->second);
      calls_.erase(it);
    }
    std::string text(payload->data(), payload->size());
    const bool accepted = ok->get_bool();
    message.erase("payload");  // after the last use of `ok`: an erase may move it
    if (accepted) {
      reply->resolve(std::move(text));
    } else {
      reply->reject(std::move(text));
    }
    return true;
  }

  // One runner thread per concurrent run; runners wait for the next job.
  // A runner counts itself idle before it sends `done`: the pool may answer
  // with the next run at once, and handle_run would otherwise start a
  // second thread for it (and the sandbox would hop between threads).
  void runner() {
    std::unique_lock lock(mutex_);
    ++idle_runners_;
    while (true) {
      job_ready_.wait(lock, [&] { return !jobs_.empty(); });
      --idle_runners_;
      RunJob job = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      Done done = run(job);
      // The request's text goes before `done` does: the pool measures this
      // worker's memory when `done` arrives (retire_on_growth), and a big
      // request's copy still held then would retire the worker for it.
      job = RunJob{};
      lock.lock();
      ++idle_runners_;
      lock.unlock();
      send_done(done);
      lock.lock();
    }
  }

  Done run(const RunJob& job) {
    Done result{json::object{{"t", "done"}, {"id", job.id}}, std::nullopt};
    json::object& done = result.message;
    CachedSandbox cached;
    try {
      cached = checkout(job);
    } catch (const std::invalid_argument& e) {
      done["failure"] =
          core::failure_to_object(Failure{FailureCode::invalid_request, e.what(), nullptr});
      return result;
    } catch (const Error& e) {
      done["failure"] = core::failure_to_object(e.to_failure());
      return result;
    }
    cached.current->id = job.id;
    {
      std::lock_guard lock(mutex_);
      if (cancelled_.erase(job.id)) {
        done["failure"] = core::failure_to_object(
            Failure{FailureCode::cancelled, "cancelled before it started", nullptr});
        checkin_locked(job.key, std::move(cached));
        return result;
      }
      active_[job.id] = cached.sandbox.get();
    }
    bool reusable = true;
    try {
      Execution execution =
          job.eval ? cached.sandbox->eval(job.code) : cached.sandbox->execute(job.code);
      done["execution"] = core::execution_fields(execution);
      result.value = execution.value();
    } catch (const Error& e) {
      done["failure"] = core::failure_to_object(e.to_failure());
      reusable = !cached.sandbox->last_run_trapped();
    } catch (const std::exception& e) {
      done["failure"] = core::failure_to_object(Failure{FailureCode::internal, e.what(), nullptr});
      reusable = false;
    }
    {
      std::lock_guard lock(mutex_);
      active_.erase(job.id);
      // A cancel for this run that came after it ended must not stop the next.
      sandbox::Hosted::clear_pending_cancel(*cached.sandbox);
      std::erase_if(calls_, [&](const auto& entry) { return entry.first.first == job.id; });
    }
    if (reusable) checkin(job.key, std::move(cached));
    return result;
  }

  // A locked-down worker cannot fork a Ruby helper: Ruby guests run on the
  // run's thread, and the pool's kill at timeout + grace is their deadline.
  // One that outlives its deadline or a cancel cannot be interrupted: report
  // the run and end this worker (the pool replaces it).
  sandbox::Hosting hosting(std::shared_ptr<CurrentRun> current) {
    sandbox::Hosting hosting;
    hosting.may_spawn = false;
    hosting.on_stuck = [this, current = std::move(current)](const Failure& failure) {
      send(json::object{{"t", "done"},
                        {"id", current->id.load()},
                        {"failure", core::failure_to_object(failure)},
                        {"ending", true}});
      std::fflush(stderr);
      ::_exit(0);
    };
    return hosting;
  }

  CachedSandbox checkout(const RunJob& job) {
    {
      std::lock_guard lock(mutex_);
      auto it = idle_.find(job.key);
      if (it != idle_.end() && !it->second.empty()) {
        CachedSandbox cached = std::move(it->second.back());
        it->second.pop_back();
        --idle_count_;
        return cached;
      }
    }
    CachedSandbox cached;
    cached.current = std::make_shared<CurrentRun>();
    cached.sandbox = sandbox::Hosted::make(job.limits, hosting(cached.current));
    for (const std::string& name : job.tools) {
      cached.sandbox->bind_async("codemode." + name, [this, current = cached.current, name](
                                                         std::string args,
                                                         sandbox::ToolReply reply) {
        const std::uint64_t id = current->id;
        std::uint64_t call;
        {
          std::lock_guard lock(mutex_);
          call = ++next_call_;
          calls_.emplace(std::make_pair(id, call), std::move(reply));
        }
        send(json::object{
            {"t", "call"}, {"id", id}, {"call", call}, {"name", name}, {"args", std::move(args)}});
      });
    }
    return cached;
  }

  void checkin(const std::string& key, CachedSandbox cached) {
    std::lock_guard lock(mutex_);
    checkin_locked(key, std::move(cached));
  }

  void checkin_locked(const std::string& key, CachedSandbox cached) {
    if (idle_count_ >= kIdleSandboxes) {
      // Evict one from the largest bucket; its isolate goes with it.
      auto largest = idle_.begin();
      for (auto it = idle_.begin(); it != idle_.end(); ++it)
        if (it->second.size() > largest->second.size()) largest = it;
      if (largest == idle_.end() || largest->second.empty()) return;
      largest->second.pop_back();
      --idle_count_;
    }
    idle_[key].push_back(std::move(cached));
    ++idle_count_;
  }

  int fd_;
  std::size_t max_frame_;
  FrameReader reader_;
  std::mutex write_mutex_;

  std::mutex mutex_;
  std::condition_variable job_ready_;
  std::deque<RunJob> jobs_;
  std::size_t idle_runners_ = 0;
  std::unordered_map<std::uint64_t, sandbox::Sandbox*> active_;
  // Cancels that arrived before their run reached its sandbox. A cancel for
  // a run that already ended can land here too; the set is cleared when it
  // grows past a bound, which only forgets such late ones.
  std::set<std::uint64_t> cancelled_;
  std::map<std::pair<std::uint64_t, std::uint64_t>, sandbox::ToolReply> calls_;
  std::uint64_t next_call_ = 0;
  std::map<std::string, std::vector<CachedSandbox>> idle_;
  std::size_t idle_count_ = 0;
};

}  // namespace

int run_worker(const WorkerSettings& settings) {
  Protections protections;
  if (settings.harden) enter_namespaces(protections);
  sandbox::set_out_of_memory_exit(kOutOfMemoryExit);
  // The same for C++ allocations (corral's, and V8's own `new`) refused at
  // the ceiling: an exception there would end in terminate() and look like
  // a crash.
  std::set_new_handler([] {
    static const char line[] = "corral worker: out of memory (operator new)\n";
    [[maybe_unused]] const ssize_t ignored = ::write(2, line, sizeof line - 1);
    ::_exit(kOutOfMemoryExit);
  });
  // Blocks past 1 MiB (a big request's text, its copies, a big answer) are
  // mapped for their own lifetime and unmapped when freed, as in the daemon
  // (apps/corral/front_main.cc says why): with glibc's default, the first
  // big block freed raises the threshold to its size, the next ones come
  // from the heap and stay resident after they are freed, and the pool
  // would retire the worker for that growth (retire_on_growth).
  ::mallopt(M_MMAP_THRESHOLD, 1 << 20);
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer's shadow memory is terabytes of private writable
  // mappings: under it, any ceiling would refuse the worker's first mmap.
  constexpr bool kCeilingPossible = false;
#else
  constexpr bool kCeilingPossible = true;
#endif
  if (kCeilingPossible && settings.memory_ceiling != 0) {
    // Before V8 starts, so that nothing it commits later escapes the bound.
    const rlim_t ceiling = static_cast<rlim_t>(settings.memory_ceiling);
    const struct rlimit data { ceiling, ceiling };
    if (::setrlimit(RLIMIT_DATA, &data) != 0) {
      std::fprintf(stderr, "corral worker: RLIMIT_DATA %llu: %s\n",
                   static_cast<unsigned long long>(ceiling), std::strerror(errno));
      return 70;
    }
  }

  // Start V8 (platform, ICU, the watchdog thread) and run once, so that
  // whatever files and threads it needs at start are in place before the
  // lockdown takes them away.
  {
    sandbox::Sandbox warm_up;
    warm_up.bind_async("codemode.warm",
                       [](std::string, sandbox::ToolReply reply) { reply.resolve("1"); });
    // Date's string forms and Intl make ICU read the time zone database,
    // which the lockdown would refuse later.
    warm_up.execute(
        "async () => JSON.stringify({a: [1, 'b']}) + new Date(0).toString() + "
        "new Intl.DateTimeFormat('en-US').format(0) + (1234.5).toLocaleString() + "
        "await codemode.warm({})");
  }

  {
    // mruby's Time reads the time zone once; do it before the lockdown.
    sandbox::Options ruby;
    ruby.language = sandbox::Language::ruby;
    sandbox::Hosted::make(ruby, sandbox::Hosting{false, {}})->eval("Time.at(0).to_s");
  }

  // What only starting needed goes back (startup_pages.hpp); one trivial
  // run then faults back in what every run needs, so the first guest does
  // not pay for it.
  drop_startup_pages(true);
  {
    sandbox::Sandbox rewarm;
    rewarm.execute("async () => 1 + 1");
  }

  if (settings.harden) {
    try {
      lock_down(settings.ipc_fd, protections);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "corral worker: lockdown failed: %s\n", e.what());
      return 70;
    }
  }

  Worker worker(settings);
  json::error_code ec;
  json::value protections_json = json::parse(to_json(protections), ec);
  worker.send(json::object{{"t", "ready"}, {"protections", std::move(protections_json)}});
  const int code = worker.serve();
  // Skip V8's teardown: runner threads may still be inside an isolate, and
  // nothing a worker holds needs an orderly release.
  std::fflush(stderr);
  ::_exit(code);
}

}  // namespace corral::pool
