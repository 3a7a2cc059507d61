// Guest Ruby that crashed the helper (a NULL dereference in mruby, a stack
// overflow), each kept as a named case: it must end in a value or a typed
// failure of the guest's own making, and the next run must succeed. Most
// were found by tests/sandbox_ruby/fuzz (ruby_guest_fuzz, its --sweep).
#include <string>
#include <vector>

#include "sandbox_ruby/test_util.hpp"

namespace corral::sandbox::testing {
namespace {

struct Case {
  const char* name;
  const char* code;
  const char* expect;  // a failure code, or "ok"
};

// The outcome of a run: "ok" or the wire name of its failure code.
std::string outcome_of(RubySandbox& sandbox, const std::string& code, std::string& message) {
  try {
    sandbox.eval(code);
    return "ok";
  } catch (const Error& e) {
    message = e.what();
    return std::string(to_string(e.code()));
  }
}

void expect_cases(const std::vector<Case>& cases) {
  RubySandbox sandbox(ruby_options());
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::string message;
    EXPECT_EQ(outcome_of(sandbox, c.code, message), c.expect) << c.code << "\n" << message;
    EXPECT_EQ(sandbox.eval("[1, 2].sum").value(), "3") << "the run after " << c.name;
  }
}

// Allocators of classes whose instances hold C state only their own
// constructors make (the --sweep found every method of these crashing).
TEST(RubyCrashRegressions, AllocateOnProcMethodAndUnboundMethodIsRefused) {
  expect_cases({
      {"ProcAllocateCall", "Proc.allocate.call", "guest_error"},
      {"ProcAllocateYield", "Proc.allocate.yield(1)", "guest_error"},
      {"ProcAllocateIndex", "Proc.allocate[1]", "guest_error"},
      {"ProcAllocateCaseEq", "Proc.allocate === 1", "guest_error"},
      {"ProcSubclassAllocateCall", "Class.new(Proc).allocate.call", "guest_error"},
      {"MethodAllocateSuperMethod", "Method.allocate.super_method", "guest_error"},
      {"UnboundMethodAllocateBind", "UnboundMethod.allocate.bind(1)", "guest_error"},
      {"UnboundMethodAllocateSuperMethod", "UnboundMethod.allocate.super_method", "guest_error"},
      {"UnboundMethodSubclassNew", "Class.new(UnboundMethod).allocate.bind(1).call", "guest_error"},
      {"AllocateBoundToProc", "Class.instance_method(:allocate).bind(Proc).call.call",
       "guest_error"},
      {"AllocateSentToProc", "Proc.__send__(:allocate).call", "guest_error"},
      {"AllocateFromSingleton", "Proc.singleton_class.instance_method(:allocate).bind(Proc).call",
       "guest_error"},
  });
}

// The hostile classes issue 13 names, each with the outcome it has now:
// instance variables on special and frozen objects, subclasses of
// immediate classes, ObjectSpace, define_method with odd arguments,
// recursion through self-referential containers, sizes past the limit.
TEST(RubyCrashRegressions, HostileClassesEndInTypedFailures) {
  expect_cases({
      {"IvarOnInteger", "1.instance_variable_set(:@a, 1)", "guest_error"},
      {"IvarOnSymbol", ":s.instance_variable_set(:@a, 1)", "guest_error"},
      {"IvarOnNil", "nil.instance_variable_set(:@a, 1)", "guest_error"},
      {"IvarOnFrozenString", "'x'.freeze.instance_variable_set(:@a, 1)", "guest_error"},
      {"IvarOnFrozenObject", "Object.new.freeze.instance_variable_set(:@a, 1)", "guest_error"},
      {"SubclassOfIntegerNew", "Class.new(Integer).new", "guest_error"},
      {"SubclassOfIntegerAllocate", "Class.new(Integer).allocate", "guest_error"},
      {"SubclassOfFloatAllocate", "Class.new(Float).allocate", "guest_error"},
      {"SubclassOfSymbolAllocate", "Class.new(Symbol).allocate", "guest_error"},
      {"ObjectSpace", "ObjectSpace.each_object { }", "guest_error"},
      {"DefineMethodInteger", "Object.define_method(:x, 1)", "guest_error"},
      {"DefineMethodNil", "Object.define_method(:x, nil)", "guest_error"},
      {"DefineMethodMethod", "Object.define_method(:x, 1.method(:+)); 1.x(2)", "guest_error"},
      {"SelfArrayHash", "a = []; a << a; a.hash", "guest_error"},
      {"SelfArrayEquals", "a = []; a << a; b = []; b << b; a == b", "guest_error"},
      {"SelfHashEquals", "h = {}; h[:a] = h; g = {}; g[:a] = g; h == g", "guest_error"},
      {"SelfHashKeyHash", "h = {}; h[h] = 1; h.hash", "guest_error"},
      {"SelfArrayFlatten", "a = []; a << a; a.flatten", "guest_error"},
      {"SelfArrayInspect", "a = []; a << a; a.inspect", "ok"},
      {"SelfStructInspect", "s = Struct.new(:a); x = s.new; x.a = x; x.inspect", "ok"},
      {"DeepNestingInspect", "a = []; 100_000.times { a = [a] }; a.inspect.size", "guest_error"},
      {"DeepNestingHash", "a = []; 100_000.times { a = [a] }; a.hash", "guest_error"},
      {"LambdaThenDeepRecursion", "l = lambda { 1 }; def f(n); f(n + 1); end; f(0)", "guest_error"},
      {"RecursiveLambda", "l = lambda { |n| l.(n + 1) }; l.(0)", "guest_error"},
      {"RecursionThroughEach", "def f(n); [1].each { f(n + 1) }; end; f(0)", "guest_error"},
      {"RecursionThroughDefineMethod",
       "class A; define_method(:f) { |n| f(n + 1) }; end; A.new.f(0)", "guest_error"},
      {"HugeStringTimes", "'x' * (2**62)", "memory_limit"},
      {"HugeLjust", "'x'.ljust(2**40)", "memory_limit"},
      {"HugeArrayNew", "Array.new(2**40)", "memory_limit"},
      {"HugeArrayTimes", "[1] * (2**40)", "memory_limit"},
      {"HugeFormatWidth", "format('%1000000000d', 1)", "memory_limit"},
      {"HugeShift", "1 << (2**40)", "guest_error"},
      {"HugePower", "2 ** (2**40)", "guest_error"},
  });
}

// What still works: the classes make their own instances, and the other
// core classes keep allocate.
TEST(RubyCrashRegressions, ConstructorsAndOtherAllocatorsStillWork) {
  RubySandbox sandbox(ruby_options());
  EXPECT_EQ(sandbox.eval("Proc.new { 5 }.call").value(), "5");
  EXPECT_EQ(sandbox.eval("Class.new(Proc).new { 6 }.call").value(), "6");
  EXPECT_EQ(sandbox.eval("1.method(:+).unbind.bind(2).call(3)").value(), "5");
  EXPECT_EQ(sandbox.eval("Integer.instance_method(:to_s).bind(7).call").value(), "\"7\"");
  EXPECT_EQ(sandbox.eval("s = String.allocate; s << 'x'; s").value(), "\"x\"");
  EXPECT_EQ(sandbox.eval("Object.allocate.frozen?").value(), "false");
  EXPECT_EQ(sandbox.eval("Class.new { def initialize; @a = 1; end; attr_reader :a }.new.a").value(),
            "1");
  const Caught caught =
      expect_failure(FailureCode::guest_error, [&] { sandbox.eval("Proc.allocate"); });
  EXPECT_TRUE(contains(caught.message, "allocator undefined for Proc (TypeError)"))
      << caught.message;
}

}  // namespace
}  // namespace corral::sandbox::testing
