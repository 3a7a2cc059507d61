#include "sandbox_ruby/fuzz/ruby_generator.hpp"

#include <iterator>
#include <string_view>

namespace corral::sandbox::fuzz {
namespace {

// Values an argument (or a receiver) can be.
constexpr std::string_view kValues[] = {
    "nil",
    "true",
    "false",
    "0",
    "1",
    "-1",
    "7",
    "2**62",
    "2**62 - 1",
    "-2**62",
    "2**63",
    "-2**63",
    "2**64",
    "-(2**64)",
    "10**30",
    "0.0",
    "-0.0",
    "1.5",
    "Float::NAN",
    "Float::INFINITY",
    "-Float::INFINITY",
    "Float::MAX",
    "Float::MIN",
    "1e308",
    "\"\"",
    "\"abc\"",
    "\"x\" * 100_000",
    "\"\\xff\\xfe\"",
    "\"%s%d%x%*s\"",
    "\"a\\0b\"",
    "\"\\u00e9t\\u00e9\"",
    "\"abc\".freeze",
    ":a",
    ":\"\"",
    ":+",
    ":initialize",
    ":__send__",
    "[]",
    "[1, 2, 3]",
    "[nil]",
    "[[1, [2]], 3]",
    "[\"b\", \"a\"]",
    "__fz_deep_a",
    "__fz_self_a",
    "{}",
    "{a: 1}",
    "{1 => 2, \"k\" => nil}",
    "__fz_deep_h",
    "__fz_self_h",
    "(1..10)",
    "(1..)",
    "(..5)",
    "(\"a\"..\"z\")",
    "(1.0..2.0)",
    "(-2**63..2**64)",
    "(0...0)",
    "(nil..nil)",
    "proc { |*a| a }",
    "lambda { |x| x }",
    "->() { }",
    "proc { |x, y| raise \"p\" }",
    "method(:puts)",
    "1.method(:+)",
    "Integer.instance_method(:+)",
    "Object",
    "Integer",
    "Float",
    "String",
    "Symbol",
    "Array",
    "Hash",
    "Range",
    "Proc",
    "Method",
    "UnboundMethod",
    "Class",
    "Module",
    "BasicObject",
    "Comparable",
    "Kernel",
    "Enumerable",
    "Struct",
    "Exception",
    "Class.new",
    "Module.new",
    "Class.new(StandardError)",
    "Struct.new(:a, :b)",
    "Object.new",
    "Object.new.freeze",
    "BasicObject.new",
    "StandardError.new(\"m\")",
    "Struct.new(:a).new(1)",
    "Time.at(0)",
    "Random.new(1)",
    "[1, 2].each",
    "(1..3).lazy",
    "Fiber.new { |x| Fiber.yield(x); 2 }",
    "Rational(1, 3)",
    "Complex(1, 2)",
    "__fz_alloc(%)",
    "__fz_mod(%)",
};

// Methods worth naming: allocators, reflection, and the ones that size
// their result from an argument.
constexpr std::string_view kMethods[] = {
    "allocate",
    "new",
    "instance_variable_set",
    "instance_variable_get",
    "instance_variables",
    "remove_instance_variable",
    "define_method",
    "define_singleton_method",
    "instance_method",
    "method",
    "public_method",
    "singleton_method",
    "bind",
    "bind_call",
    "call",
    "curry",
    "to_proc",
    "instance_exec",
    "instance_eval",
    "class_eval",
    "module_eval",
    "class_exec",
    "module_function",
    "include",
    "prepend",
    "extend",
    "superclass",
    "remove_method",
    "undef_method",
    "alias_method",
    "const_set",
    "const_get",
    "const_defined?",
    "constants",
    "remove_const",
    "class_variable_set",
    "class_variable_get",
    "attr_accessor",
    "attr_reader",
    "freeze",
    "dup",
    "clone",
    "initialize",
    "initialize_copy",
    "replace",
    "*",
    "**",
    "+",
    "-",
    "%",
    "<<",
    ">>",
    "&",
    "|",
    "^",
    "~",
    "-@",
    "<=>",
    "==",
    "===",
    "=~",
    "eql?",
    "hash",
    "inspect",
    "to_s",
    "to_a",
    "to_h",
    "to_i",
    "to_f",
    "to_sym",
    "to_str",
    "ljust",
    "rjust",
    "center",
    "pack",
    "unpack",
    "unpack1",
    "concat",
    "fill",
    "product",
    "combination",
    "permutation",
    "repeated_combination",
    "flatten",
    "flatten!",
    "sort",
    "sort_by",
    "step",
    "each_slice",
    "each_cons",
    "sum",
    "pow",
    "digits",
    "round",
    "floor",
    "ceil",
    "truncate",
    "chr",
    "ord",
    "times",
    "upto",
    "downto",
    "format",
    "sprintf",
    "first",
    "last",
    "take",
    "zip",
    "transpose",
    "bsearch",
    "rotate",
    "sample",
    "shuffle",
    "sqrt",
    "singleton_class",
    "method_missing",
    "respond_to?",
    "send",
    "public_send",
    "__send__",
    "instance_of?",
    "is_a?",
    "tap",
    "then",
    "object_id",
    "backtrace",
    "set_backtrace",
    "exception",
    "message",
    "full_message",
    "raise",
    "catch",
    "throw",
    "proc",
    "lambda",
    "block_given?",
    "local_variables",
    "resume",
    "transfer",
    "owner",
    "receiver",
    "unbind",
    "source_location",
    "parameters",
    "arity",
    "super_method",
    "ancestors",
    "included_modules",
    "instance_methods",
    "private_instance_methods",
    "method_defined?",
    "name",
    "intern",
    "force_encoding",
    "byteslice",
    "setbyte",
    "getbyte",
    "tr",
    "squeeze",
    "delete",
    "count",
    "succ",
    "slice!",
    "insert",
    "[]=",
    "[]",
    "dig",
    "fetch",
    "values_at",
    "compare_by_identity",
    "rehash",
    "default_proc=",
    "default=",
    "group_by",
    "each_with_object",
    "inject",
    "minmax",
    "max",
    "min",
    "size",
    "divmod",
    "fdiv",
    "coerce",
    "gcd",
    "lcm",
    "bit_length",
    "clamp",
    "between?",
    "each_char",
    "chars",
    "bytes",
    "split",
    "scan",
    "sub",
    "gsub",
    "index",
    "rindex",
    "*",
    "join",
    "uniq",
    "|",
    "pack",
    "cycle",
    "each_entry",
    "chunk_while",
    "slice_when",
    "to_set",
    "filter_map",
    "tally",
    "members",
    "each_pair",
    "keyword_init?",
    "Integer",
    "Float",
    "String",
    "Array",
    "Hash",
    "Rational",
    "Complex",
    "instance_variable_defined?",
    "extend",
    "private",
    "public",
    "protected",
    "module_function",
    "refine",
    "using",
    "attr",
    "define_method",
    "frozen?",
    "itself",
    "display",
    "equal?",
    "!",
    "!=",
    "__id__",
};

constexpr std::string_view kBlocks[] = {
    "",
    " { |*a| a }",
    " { |*a| raise \"b\" }",
    " { |*a| break 1 }",
    " { |*a| next 2 }",
    " { |*a| Fiber.yield(1) }",
    " { |x, y| y }",
    " { |*a| a.first.inspect }",
    "(&:to_s)",
    "(&__fz_p)",
};

template <std::size_t N>
std::string_view of(const std::string_view (&table)[N], std::size_t i) {
  return table[i % N];
}

}  // namespace

const char kRubyFuzzPrelude[] = R"RUBY(
def __fz_mods
  @__fz_mods ||= Object.constants.sort.map { |c| Object.const_get(c) }.select { |c| c.is_a?(Module) }
end
def __fz_mod(i)
  __fz_mods[i % __fz_mods.size]
end
def __fz_alloc(i)
  c = __fz_mods.select { |m| m.is_a?(Class) }
  c[i % c.size].allocate
end
def __fz_m(r, i)
  ms = begin
    (r.methods + r.private_methods).uniq.sort
  rescue Exception
    []
  end
  ms.empty? ? :itself : ms[i % ms.size]
end
def __fz_send(r, m, i, *args, &b)
  m = __fz_m(r, i) unless (r.respond_to?(m, true) rescue false)
  ar = (r.method(m).arity rescue -1)
  args = args.first(ar) if ar >= 0 && i.odd?
  r.__send__(m, *args, &b)
end
def __fz_im(m, i)
  ms = (m.instance_methods + m.private_instance_methods).uniq.sort rescue []
  ms.empty? ? :itself : ms[i % ms.size]
end
def __fz_deep_a
  a = []
  300.times { a = [a] }
  a
end
def __fz_deep_h
  h = {}
  300.times { h = {k: h} }
  h
end
def __fz_self_a
  a = [1]
  a << a
  a << {a: a}
  a
end
def __fz_self_h
  h = {}
  h[:h] = h
  h[:a] = [h]
  h
end
__fz_p = proc { |*a| a }
)RUBY";

std::string RubyGenerator::value(int depth) {
  std::string v(of(kValues, pick(std::size(kValues))));
  for (std::size_t at = v.find('%'); at != std::string::npos; at = v.find('%', at + 1)) {
    // Only the helpers' "(%)" is a slot; "%s%d" is a string's text.
    if (v.rfind("__fz_", 0) != 0) break;
    const std::string n = std::to_string(pick(1000));
    v.replace(at, 1, n);
    at += n.size() - 1;
  }
  if (depth < 2 && chance(8)) return "[" + v + ", " + value(depth + 1) + "]";
  if (depth < 2 && chance(5)) return "{" + value(depth + 1) + " => " + v + "}";
  return v;
}

std::string RubyGenerator::receiver() {
  const std::size_t i = pick(100000);
  switch (pick(10)) {
    case 0:
    case 1:
    case 2:
      return "__fz_alloc(" + std::to_string(i) + ")";
    case 3:
    case 4:
    case 5:
      return "__fz_mod(" + std::to_string(i) + ")";
    case 6:
      return "Class.new(__fz_mod(" + std::to_string(i) + "))" + (chance(50) ? ".allocate" : "");
    default:
      return value();
  }
}

std::string RubyGenerator::args() {
  const std::size_t n = pick(4);
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += ", " + value();
  return out;
}

std::string RubyGenerator::block() {
  if (!chance(30)) return "";
  return std::string(of(kBlocks, pick(std::size(kBlocks))));
}

std::string RubyGenerator::call(const std::string& recv_var) {
  // A named method the receiver lacks becomes one picked from its own.
  const std::string method =
      chance(50) ? ":\"" + std::string(of(kMethods, pick(std::size(kMethods)))) + "\""
                 : std::string(":__fz_none");
  const std::string head =
      "__fz_send(" + recv_var + ", " + method + ", " + std::to_string(pick(100000)) + args();
  const std::string b = block();
  if (b.rfind("(&", 0) == 0) {
    // "(&x)" passes a block argument: splice it after the arguments.
    return head + ", " + b.substr(1, b.size() - 2) + ")";
  }
  return head + ")" + b;
}

std::string RubyGenerator::statement() {
  if (chance(15)) {
    // An instance method of a core class called on an instance it never
    // initialised (allocate), or on a subclass's.
    const std::string m = "__fz_mod(" + std::to_string(pick(100000)) + ")";
    const std::string target = chance(50) ? "m.allocate" : "Class.new(m).allocate";
    const std::string a = args();
    std::string b = block();
    if (b.rfind("(&", 0) == 0) b.clear();
    return "begin; m = " + m + "; m.instance_method(__fz_im(m, " + std::to_string(pick(100000)) +
           ")).bind(" + target + ").call(" + (a.empty() ? a : a.substr(2)) + ")" + b +
           "; rescue Exception; end";
  }
  std::string s = "begin; r = " + receiver() + "; ";
  const std::size_t chain = 1 + (chance(30) ? pick(3) : 0);
  for (std::size_t i = 0; i < chain; ++i) s += "r = " + call("r") + "; ";
  if (chance(10)) s += "r.inspect; r.hash; r == r; ";
  return s + "rescue Exception; end";
}

std::vector<std::string> RubyGenerator::batch(std::size_t count) {
  std::vector<std::string> out;
  out.reserve(count);
  for (std::size_t i = 0; i < count; ++i) out.push_back(statement());
  return out;
}

}  // namespace corral::sandbox::fuzz
