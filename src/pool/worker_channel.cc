// src/pool/worker_channel.cc: one worker's socket and stderr.
//
// Frames in (ready, call, done) are validated field by field: the worker is
// untrusted, and the first frame that does not parse or is oversized kills
// it (protocol_error). Frames out never pass max_frame: a tool answer that
// large becomes a rejection naming the limit. Stderr becomes log lines.
#include <unistd.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "core/json.hpp"
#include "corral/pool.hpp"
#include "pool/pool_impl.hpp"

namespace corral::pool {

void WorkerPool::Impl::read_stderr(const std::shared_ptr<Worker>& worker) {
  worker->stderr_pipe.async_read_some(
      asio::buffer(worker->stderr_buffer),
      [this, worker](boost::system::error_code ec, std::size_t n) {
        auto sink = [this, &worker](std::string line) { log_stderr(*worker, std::move(line)); };
        if (ec) {
          worker->stderr_lines.end(sink);
          boost::system::error_code ignored;
          worker->stderr_pipe.close(ignored);
          return;
        }
        worker->stderr_lines.feed(std::string_view(worker->stderr_buffer.data(), n), sink);
        read_stderr(worker);
      });
}

void WorkerPool::Impl::log_stderr(const Worker& worker, std::string line) {
  if (options_.worker_stderr) {
    try {
      options_.worker_stderr(worker.number, worker.pid, line);
    } catch (...) {
      // A sink that throws must not take the pool's thread down.
    }
    return;
  }
  const std::string text = "corral worker " + std::to_string(worker.number) + ": " + line + "\n";
  [[maybe_unused]] const ssize_t ignored = ::write(2, text.data(), text.size());
}

void WorkerPool::Impl::read_next(const std::shared_ptr<Worker>& worker) {
  worker->socket.async_read_some(
      asio::buffer(worker->read_buffer),
      [this, worker](boost::system::error_code ec, std::size_t n) {
        if (ec) {
          if (worker->state != WorkerState::dying) await_exit(worker);
          return;
        }
        worker->reader.append(worker->read_buffer.data(), n);
        std::string body;
        while (worker->state != WorkerState::dying) {
          const FrameReader::Status status = worker->reader.next(body);
          if (status == FrameReader::Status::need_more) break;
          if (status == FrameReader::Status::oversized) {
            kill_worker(worker, WorkerExit::protocol_error, "sent an oversized frame");
            return;
          }
          if (!on_message(worker, body)) {
            kill_worker(worker, WorkerExit::protocol_error, "sent a malformed frame");
            return;
          }
        }
        if (worker->state != WorkerState::dying) read_next(worker);
      });
}

// Its connection closed: a worker that ends closes it just before its
// exit status is known, and the status says why (out of memory is not a
// crash), so the pool waits a moment for it. One that closed it and
// lives on is killed.
void WorkerPool::Impl::await_exit(const std::shared_ptr<Worker>& worker) {
  if (worker->state == WorkerState::ready) worker->state = WorkerState::retiring;
  worker->kill_timer.expires_after(std::chrono::milliseconds(500));
  worker->kill_timer.async_wait([this, worker](boost::system::error_code ec) {
    if (!ec && !worker->reaped && worker->state != WorkerState::dying) {
      kill_worker(worker, WorkerExit::crashed, "closed its connection");
    }
  });
}

void WorkerPool::Impl::write(const std::shared_ptr<Worker>& worker, const json::object& message) {
  write_frame(worker, encode_frame(message));
}

void WorkerPool::Impl::write_frame(const std::shared_ptr<Worker>& worker, std::string frame) {
  if (worker->state == WorkerState::dying) return;
  worker->writes.push_back(std::move(frame));
  if (!worker->writing) write_next(worker);
}

void WorkerPool::Impl::write_next(const std::shared_ptr<Worker>& worker) {
  if (worker->writes.empty() || worker->state == WorkerState::dying) {
    worker->writing = false;
    return;
  }
  worker->writing = true;
  asio::async_write(worker->socket, asio::buffer(worker->writes.front()),
                    [this, worker](boost::system::error_code ec, std::size_t) {
                      if (ec) {
                        worker->writing = false;
                        if (worker->state != WorkerState::dying) await_exit(worker);
                        return;
                      }
                      worker->writes.pop_front();
                      write_next(worker);
                    });
}

// False for anything the protocol does not allow: the worker is killed.
bool WorkerPool::Impl::on_message(const std::shared_ptr<Worker>& worker, std::string_view body) {
  std::optional<Message> parsed = parse_message(body);
  if (!parsed) return false;
  const json::object& message = parsed->fields;
  const std::string_view type = *get_string(message, "t");
  // Only a done's value travels as a tail (frames.hpp).
  if (parsed->tail && type != "done") return false;
  if (type == "ready") {
    if (worker->state != WorkerState::starting) return false;
    worker->state = WorkerState::ready;
    worker->start_timer.cancel();
    worker->memory_baseline = worker->memory.private_bytes(worker->pid);
    for (auto& [ticket, pending] : worker->running) arm_backstop(pending);
    watch_memory();
    // A standby whose predecessor is idle swaps in at once; a busy one
    // retires when its run ends (on_done).
    if (worker->standby_for != 0) {
      auto it = workers_.find(worker->standby_for);
      if (it != workers_.end() && it->second->state == WorkerState::ready &&
          it->second->running.empty()) {
        it->second->exit_reason = WorkerExit::retired;
        stop_worker(it->second);
      }
    }
    return true;
  }
  if (worker->state == WorkerState::starting) return false;
  const std::optional<std::uint64_t> id = get_count(message, "id");
  if (!id) return false;
  if (type == "call") return on_call(worker, *id, message);
  if (type == "done") return on_done(worker, *id, message, parsed->tail);
  return false;
}

bool WorkerPool::Impl::on_call(const std::shared_ptr<Worker>& worker, Ticket ticket,
                               const json::object& message) {
  const std::optional<std::uint64_t> call = get_count(message, "call");
  const json::string* name = get_string(message, "name");
  const json::string* args = get_string(message, "args");
  if (!call || !name || !args) return false;
  {
    std::lock_guard lock(stats_mutex_);
    ++stats_.tool_calls;
  }
  emit({.kind = Event::Kind::tool_call, .worker = worker->number, .pid = worker->pid});
  auto it = worker->running.find(ticket);
  if (it == worker->running.end() || it->second->settled) {
    answer(worker, ticket, *call, false, "Execution has already completed.");
    return true;
  }
  Pending& pending = *it->second;
  if (!pending.request.dispatcher) {
    answer(worker, ticket, *call, false, "no tool dispatcher: " + std::string(name->c_str()));
    return true;
  }
  auto state = std::make_shared<ToolAnswer::State>();
  state->pool = weak_from_this();
  state->worker = worker->number;
  state->ticket = ticket;
  state->call = *call;
  ToolAnswer answer(state);
  try {
    pending.request.dispatcher(std::string(name->data(), name->size()),
                               std::string(args->data(), args->size()), answer);
  } catch (const std::exception& e) {
    answer.reject(e.what());
  } catch (...) {
    answer.reject("the tool dispatcher failed");
  }
  return true;
}

// Sends a tool call's answer. One the worker would refuse as an oversized
// frame (and exit on, failing every run it holds) becomes a rejection
// that says so: the guest sees a tool error it can catch.
void WorkerPool::Impl::answer(const std::shared_ptr<Worker>& worker, Ticket ticket,
                              std::uint64_t call, bool ok, std::string payload) {
  auto message = [&](bool ok, std::string payload) {
    return json::object{{"t", "answer"},
                        {"id", ticket},
                        {"call", call},
                        {"ok", ok},
                        {"payload", std::move(payload)}};
  };
  std::string frame = encode_frame(message(ok, std::move(payload)));
  if (const std::size_t size = frame.size() - kFrameHeaderBytes; size > options_.max_frame) {
    frame = encode_frame(message(false, too_large("the tool's answer", size)));
  }
  write_frame(worker, std::move(frame));
}

void WorkerPool::Impl::deliver_answer(const ToolAnswer::State& state, bool ok,
                                      std::string payload) {
  auto it = workers_.find(state.worker);
  if (it == workers_.end()) return;
  const std::shared_ptr<Worker>& worker = it->second;
  auto run = worker->running.find(state.ticket);
  if (run == worker->running.end() || run->second->settled) return;
  answer(worker, state.ticket, state.call, ok, std::move(payload));
}

bool WorkerPool::Impl::on_done(const std::shared_ptr<Worker>& worker, Ticket ticket,
                               const json::object& message, std::optional<std::string_view> value) {
  auto it = worker->running.find(ticket);
  if (it == worker->running.end()) return false;
  std::optional<Outcome> answered;
  try {
    if (const json::value* execution = message.if_contains("execution");
        execution && execution->is_object()) {
      // The value is checked here, once, and goes on as the text it is.
      if (!value || !core::is_json_value_text(*value)) return false;
      answered.emplace(core::execution_from_fields(execution->get_object(), std::string(*value)));
    } else if (value) {
      return false;
    } else if (const json::value* failure = message.if_contains("failure");
               failure && failure->is_object()) {
      answered.emplace(core::failure_from_object(failure->get_object()));
    } else {
      return false;
    }
  } catch (const std::exception&) {
    return false;
  }
  std::shared_ptr<Pending> pending = it->second;
  worker->running.erase(it);
  ++worker->executions;
  // Before the completion runs: a caller that reads the stats once it has
  // its answer must not still see its run as running.
  update_gauges();
  Outcome outcome = std::move(*answered);
  if (!pending->memory_verdict.empty()) outcome = memory_outcome(*pending, std::move(outcome));
  settle(pending, std::move(outcome));

  const json::value* ending = message.if_contains("ending");
  retire_if_due(worker, ending && ending->is_bool() && ending->get_bool());
  after_settle();
  return true;
}

}  // namespace corral::pool
