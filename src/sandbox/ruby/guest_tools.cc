// The methods through which guest code reaches the host: the one output
// primitive every Ruby output method ends in (Kernel#__corral_write__),
// bound tools (the tool-call budget, the argument as JSON, the answer as a
// Ruby value or a coded exception) and the method_missing of tool modules.
// mruby unwinds with longjmp: the C++ work of a call is done, and its
// objects gone, before it raises (call_tool).
#include <mruby.h>
#include <mruby/class.h>
#include <mruby/error.h>
#include <mruby/hash.h>
#include <mruby/string.h>
#include <mruby/variable.h>

#include <string>

#include "sandbox/ruby/guest_internal.hpp"
#include "sandbox/ruby/values.hpp"

namespace corral::sandbox::ruby {
namespace {

[[noreturn]] void raise_coded(mrb_state* mrb, const char* class_name, FailureCode code,
                              mrb_value message) {
  RClass* corral = mrb_module_get(mrb, "Corral");
  RClass* cls = mrb_class_get_under(mrb, corral, class_name);
  mrb_value exc = mrb_exc_new_str(mrb, cls, message);
  mrb_iv_set(mrb, exc, mrb_intern_cstr(mrb, kCodeIvar), mrb_int_value(mrb, static_cast<int>(code)));
  mrb_exc_raise(mrb, exc);
  __builtin_unreachable();  // mrb_noreturn is empty in strict C++
}

mrb_value ruby_string(mrb_state* mrb, const std::string& text) {
  return mrb_str_new(mrb, text.data(), text.size());
}

std::string bound_tools(const Guest& guest) {
  std::string list;
  for (const std::string& path : guest.setup().tools) list += (list.empty() ? "" : ", ") + path;
  return list;
}

enum class CallStatus { ok, argument, tool_error, stop };

// The C++ half of a tool call: every C++ object it makes dies before the
// caller raises into mruby.
CallStatus call_tool(mrb_state* mrb, Guest& guest, std::uint32_t index, const mrb_value* argv,
                     mrb_int argc, mrb_value& result, std::uint8_t& stop_code) {
  const std::string& path = guest.setup().tools[index];
  if (argc > 1) {
    result = ruby_string(
        mrb, path + " takes one argument (a JSON value, or keywords), not " + std::to_string(argc));
    return CallStatus::argument;
  }
  std::string args = "null";
  if (argc == 1) {
    args.clear();
    std::string why;
    switch (to_json(mrb, argv[0], args, why, "argument", json_limit(guest.setup()))) {
      case JsonStatus::ok:
        break;
      case JsonStatus::unserializable:
        result = ruby_string(mrb, "the argument of " + path + " has no JSON form: " + why);
        return CallStatus::argument;
      case JsonStatus::too_large:
        std::string().swap(args);  // the partial text goes before the guest goes on
        result = ruby_string(mrb, "the argument of " + path + " is too large as JSON: " + why);
        return CallStatus::argument;
    }
  }
  std::string out;
  switch (guest.host().call_tool(index, std::move(args), out, stop_code)) {
    case GuestHost::Answer::ok:
      if (!from_json(mrb, out, result)) {
        result = ruby_string(mrb, path + " returned invalid JSON");
        return CallStatus::tool_error;
      }
      return CallStatus::ok;
    case GuestHost::Answer::error:
      result = ruby_string(mrb, out);
      return CallStatus::tool_error;
    case GuestHost::Answer::stop:
      return CallStatus::stop;
  }
  return CallStatus::stop;
}

}  // namespace

mrb_value write_method(mrb_state* mrb, mrb_value self) {
  mrb_int channel = 0;
  mrb_value text;
  mrb_get_args(mrb, "iS", &channel, &text);
  guest_of(mrb)->write(channel == 1 ? 1 : 0, RSTRING_PTR(text),
                       static_cast<std::size_t>(RSTRING_LEN(text)));
  return mrb_nil_value();
}

// A misspelt tool: no_such_tool, naming what is bound.
mrb_value missing_tool_method(mrb_state* mrb, mrb_value self) {
  mrb_sym name = 0;
  const mrb_value* argv = nullptr;
  mrb_int argc = 0;
  mrb_get_args(mrb, "n*", &name, &argv, &argc);
  mrb_value message;
  {
    const char* module = mrb_class_name(mrb, mrb_class_ptr(self));
    mrb_int len = 0;
    const char* method = mrb_sym_name_len(mrb, name, &len);
    std::string text = "no tool named " + std::string(module ? module : "?") + "." +
                       std::string(method, static_cast<std::size_t>(len)) +
                       " is bound (bound tools: " + bound_tools(*guest_of(mrb)) + ")";
    message = ruby_string(mrb, text);
  }
  raise_coded(mrb, "NoServiceError", FailureCode::no_such_tool, message);
}

mrb_value tool_method(mrb_state* mrb, mrb_value self) {
  const mrb_value* argv = nullptr;
  mrb_int argc = 0;
  mrb_value block;
  mrb_get_args(mrb, "*&", &argv, &argc, &block);
  Guest& guest = *guest_of(mrb);
  const mrb_sym mid = mrb_get_mid(mrb);
  mrb_value table = mrb_iv_get(mrb, self, mrb_intern_cstr(mrb, kToolsIvar));
  mrb_value index =
      mrb_hash_p(table) ? mrb_hash_get(mrb, table, mrb_symbol_value(mid)) : mrb_nil_value();
  if (!mrb_integer_p(index) || mrb_integer(index) < 0 ||
      static_cast<std::size_t>(mrb_integer(index)) >= guest.setup().tools.size()) {
    raise_coded(mrb, "NoServiceError", FailureCode::no_such_tool,
                mrb_str_new_lit(mrb, "this method is not a bound tool"));
  }
  Counters& counters = guest.counters();
  const std::uint64_t max = guest.setup().max_tool_calls;
  if (max != kNone && counters.tool_calls.load() >= max) {
    guest.stop(static_cast<std::uint8_t>(FailureCode::tool_error),
               "the run made more tool calls than max_tool_calls allows");
  }
  counters.tool_calls.fetch_add(1);
  mrb_value result = mrb_nil_value();
  std::uint8_t stop_code = kNoFailure;
  switch (call_tool(mrb, guest, static_cast<std::uint32_t>(mrb_integer(index)), argv, argc, result,
                    stop_code)) {
    case CallStatus::ok:
      return result;
    case CallStatus::argument:
      raise_coded(mrb, "ServiceArgumentError", FailureCode::tool_argument, result);
    case CallStatus::tool_error:
      raise_coded(mrb, "ServiceError", FailureCode::tool_error, result);
    case CallStatus::stop:
      break;
  }
  guest.stop(stop_code, "");
}

}  // namespace corral::sandbox::ruby
