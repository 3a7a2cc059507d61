// src/sandbox/ruby/core_prelude.hpp: Ruby 3.1 core methods that Debian's
// mruby 3.1 lacks (or gets wrong), written in Ruby. guest.cc compiles it
// once per Guest and loads the bytecode into every fresh state, after the
// output prelude. docs/ruby.md lists what is here; each method has a test in
// tests/sandbox_ruby/core_methods_test.cc. Semantics follow CRuby 3.1,
// including the forms without a block, empty collections and Float handling;
// where mruby cannot (no Bignum, no Regexp) the difference is documented.
// Nothing here may be slower than linear in its input: Range#sum of an
// Integer range without a block is arithmetic, Integer#pow with a modulus is
// square-and-multiply.
#pragma once

namespace corral::sandbox::ruby {

constexpr char kCorePrelude[] = R"RUBY(
module Corral
  # CRuby's sum: exact while the values are Integers (or Rationals),
  # Kahan-Babuska compensated from the first Float on, plain + otherwise.
  class Summer
    def initialize(v)
      @v = v
      @c = 0.0
      if v.is_a?(Float)
        @mode = 1
        @f = v
      elsif v.is_a?(Integer) || v.is_a?(Rational)
        @mode = 0
      else
        @mode = 2
      end
    end

    def add(e)
      if @mode == 0
        if e.is_a?(Float)
          @mode = 1
          @f = @v.to_f
          @c = 0.0
        elsif e.is_a?(Integer) || e.is_a?(Rational)
          @v += e
          return
        else
          @mode = 2
        end
      end
      if @mode == 1
        if e.is_a?(Float) || e.is_a?(Integer) || e.is_a?(Rational)
          x = e.to_f
          f = @f
          if f.nan?
          elsif x.nan?
            @f = x
          elsif x.infinite?
            @f = f.infinite? && (x > 0) != (f > 0) ? Float::NAN : x
          elsif f.infinite?
          else
            t = f + x
            if f.abs >= x.abs
              @c += (f - t) + x
            else
              @c += (x - t) + f
            end
            @f = t
          end
          return
        end
        # As CRuby: the compensation is dropped when a non-number arrives.
        @mode = 2
        @v = @f
      end
      @v += e
    end

    def value
      @mode == 1 ? @f + @c : @v
    end
  end

  # a * b % m for 0 <= a, b < m without overflowing 64 bits. Past 2**62
  # this build's Integer comparisons are unreliable: refused.
  def self.mulmod(a, b, m)
    return a * b % m if m <= 3037000499
    raise RangeError, "integer overflow: modulus past 2**62" if (m >> 62) != 0
    r = 0
    while b > 0
      r = r >= m - a ? r - (m - a) : r + a if (b & 1) == 1
      a = a >= m - a ? a - (m - a) : a + a
      b >>= 1
    end
    r
  end

  # 10**n, or nil past what an Integer holds.
  def self.pow10(n)
    n > 18 ? nil : 10**n
  end

  def self.to_integer(v)
    return v if v.is_a?(Integer)
    return v.to_i if v.is_a?(Float)
    raise TypeError, "no implicit conversion of #{v.nil? ? 'nil' : v.class} into Integer"
  end

  # CRuby's ruby_float_step: i * unit + beg, no accumulated error.
  def self.float_step(beg, en, unit, excl)
    if en.nil?
      i = 0
      while true
        yield i * unit + beg
        i += 1
      end
    end
    n = (en - beg) / unit
    err = (beg.abs + en.abs + (en - beg).abs) / unit.abs * Float::EPSILON
    if unit.infinite?
      yield beg if unit > 0 ? beg <= en : beg >= en
      return
    end
    err = 0.5 if err > 0.5
    if excl
      return if n <= 0
      n = n < 1 ? 0 : (n - err).floor
      d = (n + 1) * unit + beg
      if beg < en
        n += 1 if d < en
      elsif beg > en
        n += 1 if d > en
      end
    else
      return if n < 0
      n = (n + err).floor
    end
    i = 0
    while i <= n
      d = i * unit + beg
      d = en if unit >= 0 ? en < d : d < en
      yield d
      i += 1
    end
  end

  # rand(range) for Kernel#rand and Random: gen.call(n) is an Integer in
  # 0...n, gen.call(0) a Float in [0, 1). nil when the range is empty.
  def self.rand_range(r, gen)
    b = r.begin
    e = r.end
    raise ArgumentError, "invalid argument - #{r.inspect}" if b.nil? || e.nil?
    if b.is_a?(Integer) && e.is_a?(Integer)
      e -= 1 if r.exclude_end?
      return nil if e < b
      return b + gen.call(e - b + 1)
    end
    unless b.is_a?(Numeric) && e.is_a?(Numeric)
      raise TypeError, "no implicit conversion of Range into Integer"
    end
    b = b.to_f
    e = e.to_f
    return nil if e < b || (e == b && r.exclude_end?)
    b + gen.call(0) * (e - b)
  end

  CATCH_TAGS = []
  # Kernel#throw's carrier: an Exception (not a StandardError), so a plain
  # `rescue` between throw and catch does not stop it.
  class Throw < Exception
    attr_reader :tag, :value
    def initialize(tag, value)
      @tag = tag
      @value = value
      super("uncaught throw #{tag.inspect}")
    end
  end

  MONTHS = %w[January February March April May June July August September October November December]
  DAYS = %w[Sunday Monday Tuesday Wednesday Thursday Friday Saturday]

  def self.leap?(y)
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
  end

  def self.iso_week(t)
    wd = t.wday == 0 ? 7 : t.wday
    y = t.year
    ord = t.yday - wd + 4
    if ord < 1
      y -= 1
      ord += leap?(y) ? 366 : 365
    elsif ord > (leap?(y) ? 366 : 365)
      ord -= leap?(y) ? 366 : 365
      y += 1
    end
    [y, (ord - 1) / 7 + 1]
  end

  def self.tnum(v, flags, width, defwidth, defpad)
    pad = defpad
    pad = "0" if flags.include?("0")
    pad = " " if flags.include?("_")
    return v.to_s if flags.include?("-")
    w = width || defwidth
    v < 0 ? "-" + (-v).to_s.rjust(w - 1, pad) : v.to_s.rjust(w, pad)
  end

  def self.tstr(s, flags, width)
    s = s.upcase if flags.include?("^")
    s = s.swapcase if flags.include?("#")
    return s if width.nil? || flags.include?("-")
    s.rjust(width, flags.include?("0") ? "0" : " ")
  end

  def self.tfield(t, c, flags, width, colons)
    case c
    when "Y" then tnum(t.year, flags, width, 4, "0")
    when "C" then tnum(t.year / 100, flags, width, 2, "0")
    when "y" then tnum(t.year % 100, flags, width, 2, "0")
    when "m" then tnum(t.mon, flags, width, 2, "0")
    when "B" then tstr(MONTHS[t.mon - 1], flags, width)
    when "b", "h" then tstr(MONTHS[t.mon - 1][0, 3], flags, width)
    when "d" then tnum(t.day, flags, width, 2, "0")
    when "e" then tnum(t.day, flags, width, 2, " ")
    when "j" then tnum(t.yday, flags, width, 3, "0")
    when "H" then tnum(t.hour, flags, width, 2, "0")
    when "k" then tnum(t.hour, flags, width, 2, " ")
    when "I" then tnum(t.hour % 12 == 0 ? 12 : t.hour % 12, flags, width, 2, "0")
    when "l" then tnum(t.hour % 12 == 0 ? 12 : t.hour % 12, flags, width, 2, " ")
    when "M" then tnum(t.min, flags, width, 2, "0")
    when "S" then tnum(t.sec, flags, width, 2, "0")
    when "L", "N"
      digits = (t.usec * 1000).to_s.rjust(9, "0")
      w = width || (c == "L" ? 3 : 9)
      w <= 9 ? digits[0, w] : digits.ljust(w, "0")
    when "z"
      off = t.utc_offset
      sign = off < 0 ? "-" : "+"
      off = off.abs
      hh = (off / 3600).to_s.rjust(2, "0")
      mm = (off % 3600 / 60).to_s.rjust(2, "0")
      ss = (off % 60).to_s.rjust(2, "0")
      s = colons == 0 ? sign + hh + mm : colons == 1 ? "#{sign}#{hh}:#{mm}" : "#{sign}#{hh}:#{mm}:#{ss}"
      width ? s.rjust(width, flags.include?("_") ? " " : "0") : s
    when "Z" then tstr(t.utc? ? "UTC" : t.zone.to_s, flags, width)
    when "A" then tstr(DAYS[t.wday], flags, width)
    when "a" then tstr(DAYS[t.wday][0, 3], flags, width)
    when "p"
      s = t.hour < 12 ? "AM" : "PM"
      flags.include?("#") ? s.downcase : tstr(s, flags, width)
    when "P" then tstr(t.hour < 12 ? "am" : "pm", flags, width)
    when "u" then tnum(t.wday == 0 ? 7 : t.wday, flags, width, 1, "0")
    when "w" then tnum(t.wday, flags, width, 1, "0")
    when "U" then tnum((t.yday - 1 + 7 - t.wday) / 7, flags, width, 2, "0")
    when "W" then tnum((t.yday - 1 + 7 - (t.wday + 6) % 7) / 7, flags, width, 2, "0")
    when "G" then tnum(iso_week(t)[0], flags, width, 4, "0")
    when "g" then tnum(iso_week(t)[0] % 100, flags, width, 2, "0")
    when "V" then tnum(iso_week(t)[1], flags, width, 2, "0")
    when "s" then tnum(t.to_i, flags, width, 1, "0")
    when "F" then t.strftime("%Y-%m-%d")
    when "T", "X" then t.strftime("%H:%M:%S")
    when "D", "x" then t.strftime("%m/%d/%y")
    when "R" then t.strftime("%H:%M")
    when "r" then t.strftime("%I:%M:%S %p")
    when "c" then t.strftime("%a %b %e %H:%M:%S %Y")
    when "v" then t.strftime("%e-%^b-%Y")
    when "n" then "\n"
    when "t" then "\t"
    when "%" then "%"
    end
  end

  class Output
    def printf(*args)
      write(format(*args)) unless args.empty?
      nil
    end
    def putc(c)
      write(c.is_a?(String) ? c[0].to_s : (c.to_i & 0xff).chr)
      c
    end
  end
end

class UncaughtThrowError < ArgumentError
  attr_reader :tag, :value
  def initialize(tag, value = nil, message = nil)
    @tag = tag
    @value = value
    super(message || "uncaught throw #{tag.inspect}")
  end
end

module Kernel
  def printf(*args)
    return nil if args.empty?
    out = args[0].is_a?(String) ? $stdout : args.shift
    out.write(format(*args))
    nil
  end

  def pp(*args)
    args.each { |a| $stdout.write(a.inspect + "\n") }
    args.size <= 1 ? args.first : args
  end

  def putc(c)
    $stdout.putc(c)
  end

  def display(port = $stdout)
    port.write(to_s)
    nil
  end

  # mruby does not keep methods private from send, so neither is this.
  def public_send(name, *args, &block)
    send(name, *args, &block)
  end

  def catch(tag = Object.new)
    Corral::CATCH_TAGS.push(tag)
    begin
      yield tag
    rescue Corral::Throw => e
      raise e unless e.tag.equal?(tag)
      e.value
    ensure
      Corral::CATCH_TAGS.pop
    end
  end

  def throw(tag, value = nil)
    raise UncaughtThrowError.new(tag, value) unless Corral::CATCH_TAGS.any? { |t| t.equal?(tag) }
    raise Corral::Throw.new(tag, value)
  end

  alias_method :__corral_kernel_rand, :rand
  def rand(max = 0)
    return __corral_kernel_rand(max) unless max.is_a?(Range)
    Corral.rand_range(max, ->(n) { __corral_kernel_rand(n) })
  end
end

class Random
  alias_method :__corral_random_rand, :rand
  def rand(*args)
    return __corral_random_rand(*args) unless args.size == 1 && args[0].is_a?(Range)
    r = Corral.rand_range(args[0], ->(n) { __corral_random_rand(n) })
    raise ArgumentError, "invalid argument - #{args[0].inspect}" if r.nil?
    r
  end

  class << self
    alias_method :__corral_random_s_rand, :rand
    def rand(*args)
      return __corral_random_s_rand(*args) unless args.size == 1 && args[0].is_a?(Range)
      r = Corral.rand_range(args[0], ->(n) { __corral_random_s_rand(n) })
      raise ArgumentError, "invalid argument - #{args[0].inspect}" if r.nil?
      r
    end
  end
end

module Comparable
  def clamp(*args)
    if args.size == 1
      r = args[0]
      raise TypeError, "wrong argument type #{r.class} (expected Range)" unless r.is_a?(Range)
      min = r.begin
      max = r.end
      raise ArgumentError, "cannot clamp with an exclusive range" if !max.nil? && r.exclude_end?
    elsif args.size == 2
      min, max = args
    else
      raise ArgumentError, "wrong number of arguments (given #{args.size}, expected 1..2)"
    end
    if !min.nil? && !max.nil?
      c = min <=> max
      raise ArgumentError, "min argument must be smaller than max argument" if c.nil? || c > 0
    end
    unless min.nil?
      c = self <=> min
      raise ArgumentError, "comparison of #{self.class} with #{min.class} failed" if c.nil?
      return self if c == 0
      return min if c < 0
    end
    unless max.nil?
      c = self <=> max
      raise ArgumentError, "comparison of #{self.class} with #{max.class} failed" if c.nil?
      return max if c > 0
    end
    self
  end
end

class Integer
  def even?
    (self & 1) == 0
  end

  def odd?
    (self & 1) == 1
  end

  def pred
    self - 1
  end

  def fdiv(other)
    to_f / other
  end

  def digits(base = 10)
    base = Corral.to_integer(base)
    raise ArgumentError, "negative radix" if base < 0
    raise ArgumentError, "invalid radix #{base}" if base < 2
    raise Math::DomainError, "out of domain" if self < 0
    return [0] if self == 0
    r = []
    n = self
    while n > 0
      r << n % base
      n /= base
    end
    r
  end

  def pow(b, m = nil)
    return self**b if m.nil?
    unless b.is_a?(Integer)
      raise TypeError, "Integer#pow() 2nd argument not allowed unless a 1st argument is integer"
    end
    if b < 0
      raise RangeError, "Integer#pow() 1st argument cannot be negative when 2nd argument specified"
    end
    unless m.is_a?(Integer)
      raise TypeError, "Integer#pow() 2nd argument not allowed unless all arguments are integers"
    end
    raise ZeroDivisionError, "divided by 0" if m == 0
    am = m.abs
    r = 1 % am
    x = self % am
    while b > 0
      r = Corral.mulmod(r, x, am) if (b & 1) == 1
      x = Corral.mulmod(x, x, am)
      b >>= 1
    end
    m < 0 && r != 0 ? r + m : r
  end

  def gcd(other)
    raise TypeError, "not an integer" unless other.is_a?(Integer)
    a = abs
    b = other.abs
    a, b = b, a % b while b != 0
    a
  end

  def lcm(other)
    raise TypeError, "not an integer" unless other.is_a?(Integer)
    return 0 if self == 0 || other == 0
    (self / gcd(other) * other).abs
  end

  def gcdlcm(other)
    [gcd(other), lcm(other)]
  end

  def bit_length
    n = self < 0 ? ~self : self
    l = 0
    while n > 0
      n >>= 1
      l += 1
    end
    l
  end

  def self.sqrt(n)
    n = Corral.to_integer(n)
    raise Math::DomainError, 'Numerical argument is out of domain - "isqrt"' if n < 0
    r = Math.sqrt(n).to_i
    r = 3037000499 if r > 3037000499
    # Differences, not comparisons: this build compares Integers at or
    # past 2**62 wrongly, but subtracts them right.
    r -= 1 while r * r - n > 0
    r += 1 while r < 3037000499 && (r + 1) * (r + 1) - n <= 0
    r
  end

  # Negative digits round to tens, hundreds, ...; as CRuby, half: :up
  # (the default, away from zero), :even or :down.
  def round(ndigits = 0, half: nil)
    ndigits = Corral.to_integer(ndigits)
    unless half.nil? || half == :up || half == :even || half == :down
      raise ArgumentError, "invalid rounding mode: #{half}"
    end
    return self if ndigits >= 0
    p = Corral.pow10(-ndigits)
    return 0 if p.nil?
    q, r = abs.divmod(p)
    q += 1 if r * 2 > p || (r * 2 == p && (half == :even ? q.odd? : half != :down))
    self < 0 ? -(q * p) : q * p
  end

  def floor(ndigits = 0)
    ndigits = Corral.to_integer(ndigits)
    return self if ndigits >= 0
    p = Corral.pow10(-ndigits)
    if p.nil?
      return 0 if self >= 0
      raise RangeError, "integer overflow"
    end
    self - self % p
  end

  def ceil(ndigits = 0)
    ndigits = Corral.to_integer(ndigits)
    return self if ndigits >= 0
    -((-self).floor(ndigits))
  end

  def truncate(ndigits = 0)
    self < 0 ? ceil(ndigits) : floor(ndigits)
  end
end

class Float
  def fdiv(other)
    self / other
  end
end

module Enumerable
  def sum(init = 0)
    s = Corral::Summer.new(init)
    if block_given?
      each { |*a| s.add(yield(a.size > 1 ? a : a[0])) }
    else
      each { |*a| s.add(a.size > 1 ? a : a[0]) }
    end
    s.value
  end

  def each_entry(*args)
    return to_enum(:each_entry, *args) unless block_given?
    each(*args) { |*a| yield(a.size > 1 ? a : a[0]) }
    self
  end

  def compact
    r = []
    each do |*a|
      e = a.size > 1 ? a : a[0]
      r << e unless e.nil?
    end
    r
  end

  def filter_map
    return to_enum(:filter_map) unless block_given?
    r = []
    each do |*a|
      v = yield(*a)
      r << v if v
    end
    r
  end

  def tally(hash = nil)
    h = hash.nil? ? {} : hash
    each do |*a|
      e = a.size > 1 ? a : a[0]
      h[e] = h.fetch(e, 0) + 1
    end
    h
  end

  def slice_when(&block)
    raise ArgumentError, "tried to create Proc object without a block" unless block
    src = self
    Enumerator.new do |y|
      acc = nil
      prev = nil
      src.each do |*a|
        e = a.size > 1 ? a : a[0]
        if acc.nil?
          acc = [e]
        elsif block.call(prev, e)
          y << acc
          acc = [e]
        else
          acc << e
        end
        prev = e
      end
      y << acc unless acc.nil?
    end
  end

  def chunk_while(&block)
    raise ArgumentError, "tried to create Proc object without a block" unless block
    slice_when { |a, b| !block.call(a, b) }
  end

  def chunk(&block)
    return to_enum(:chunk) unless block
    src = self
    Enumerator.new do |y|
      key = nil
      acc = nil
      src.each do |*a|
        e = a.size > 1 ? a : a[0]
        k = block.call(e)
        if k.nil? || k == :_separator
          y << [key, acc] unless acc.nil?
          acc = nil
        elsif k == :_alone
          y << [key, acc] unless acc.nil?
          y << [:_alone, [e]]
          acc = nil
        elsif k.is_a?(Symbol) && k.to_s.start_with?("_")
          raise RuntimeError, "symbols beginning with an underscore are reserved"
        elsif !acc.nil? && key == k
          acc << e
        else
          y << [key, acc] unless acc.nil?
          key = k
          acc = [e]
        end
      end
      y << [key, acc] unless acc.nil?
    end
  end

  alias_method :__corral_enum_min, :min
  alias_method :__corral_enum_max, :max
  alias_method :__corral_enum_min_by, :min_by
  alias_method :__corral_enum_max_by, :max_by

  def min(n = nil, &block)
    return __corral_enum_min(&block) if n.nil?
    Corral.check_size(n)
    sort(&block).first(n)
  end

  def max(n = nil, &block)
    return __corral_enum_max(&block) if n.nil?
    Corral.check_size(n)
    block ? sort { |a, b| block.call(b, a) }.first(n) : sort { |a, b| b <=> a }.first(n)
  end

  # With n: ties keep their order (CRuby leaves it unspecified).
  def min_by(n = nil, &block)
    return __corral_enum_min_by(&block) if n.nil?
    return to_enum(:min_by, n) unless block
    Corral.check_size(n)
    Corral.ranked(self, block, 1).first(n).map { |t| t[2] }
  end

  def max_by(n = nil, &block)
    return __corral_enum_max_by(&block) if n.nil?
    return to_enum(:max_by, n) unless block
    Corral.check_size(n)
    Corral.ranked(self, block, -1).first(n).map { |t| t[2] }
  end
end

module Corral
  # [key, index, element] sorted by key (dir 1 ascending, -1 descending),
  # then by position.
  def self.ranked(enum, block, dir)
    i = -1
    enum.map { |e| [block.call(e), i += 1, e] }.sort do |a, b|
      c = a[0] <=> b[0]
      raise ArgumentError, "comparison of #{a[0].class} with #{b[0].class} failed" if c.nil?
      c == 0 ? a[1] <=> b[1] : c * dir
    end
  end

  def self.check_size(n)
    raise TypeError, "no implicit conversion of #{n.class} into Integer" unless n.is_a?(Integer)
    raise ArgumentError, "negative size (#{n})" if n < 0
  end
end

class Array
  def sum(init = 0)
    v = init
    s = nil
    exact = v.is_a?(Integer)
    given = block_given?
    i = 0
    while i < size
      e = given ? yield(self[i]) : self[i]
      i += 1
      if exact && e.is_a?(Integer)
        v += e
      else
        if s.nil?
          s = Corral::Summer.new(v)
          exact = false
        end
        s.add(e)
      end
    end
    s.nil? ? v : s.value
  end

  alias_method :__corral_array_times, :*
  def *(arg)
    arg.is_a?(String) ? join(arg) : __corral_array_times(arg)
  end

  def sort_by!(&block)
    return to_enum(:sort_by!) unless block
    replace(sort_by(&block))
  end

  # mruby 3.1 never takes an inspected Array off its recursion list, so a
  # value that appears twice printed as [...].
  def _inspect(recur_list)
    return "[]" if size == 0
    return "[...]" if recur_list[object_id]
    recur_list[object_id] = true
    begin
      parts = []
      i = 0
      while i < size
        parts << self[i]._inspect(recur_list)
        i += 1
      end
      "[" + parts.join(", ") + "]"
    ensure
      recur_list.delete(object_id)
    end
  end
end

class Hash
  def _inspect(recur_list)
    return "{}" if size == 0
    return "{...}" if recur_list[object_id]
    recur_list[object_id] = true
    begin
      parts = []
      each { |k, v| parts << k._inspect(recur_list) + "=>" + v._inspect(recur_list) }
      "{" + parts.join(", ") + "}"
    ensure
      recur_list.delete(object_id)
    end
  end

  alias_method :__corral_hash_to_h, :to_h
  def to_h(&block)
    return __corral_hash_to_h unless block
    h = {}
    each do |k, v|
      pair = block.call(k, v)
      raise TypeError, "wrong element type #{pair.class} (expected array)" unless pair.is_a?(Array)
      unless pair.size == 2
        raise ArgumentError, "element has wrong array length (expected 2, was #{pair.size})"
      end
      h[pair[0]] = pair[1]
    end
    h
  end

  alias_method :__corral_hash_transform_keys, :transform_keys
  def transform_keys(map = nil, &block)
    return __corral_hash_transform_keys(&block) if map.nil?
    h = {}
    each { |k, v| h[map.key?(k) ? map[k] : (block ? block.call(k) : k)] = v }
    h
  end

  alias_method :__corral_hash_transform_keys!, :transform_keys!
  def transform_keys!(map = nil, &block)
    return __corral_hash_transform_keys!(&block) if map.nil?
    replace(transform_keys(map, &block))
  end
end

class Struct
  def _inspect(recur_list)
    return "#<struct #{self.class}:...>" if recur_list[object_id]
    recur_list[object_id] = true
    begin
      name = self.class.to_s
      s = name.start_with?("#") ? "#<struct " : "#<struct #{name} "
      s + members.map { |m| "#{m}=#{self[m]._inspect(recur_list)}" }.join(", ") + ">"
    ensure
      recur_list.delete(object_id)
    end
  end

  class << self
    alias_method :__corral_struct_new, :new
    def new(*args, keyword_init: nil, &block)
      c = __corral_struct_new(*args, &block)
      return c unless keyword_init
      init = Module.new do
        define_method(:initialize) do |*a, **kw|
          kw = a.pop if kw.empty? && a.size == 1 && a[0].is_a?(Hash)
          raise ArgumentError, "wrong number of arguments (given #{a.size}, expected 0)" unless a.empty?
          unknown = kw.keys - self.class.members
          raise ArgumentError, "unknown keywords: #{unknown.join(', ')}" unless unknown.empty?
          super(*self.class.members.map { |m| kw[m] })
        end
      end
      c.include(init)
      c.define_singleton_method(:keyword_init?) { true }
      c.define_singleton_method(:inspect) { "#{name}(keyword_init: true)" }
      c
    end
  end
end

class Enumerator::Lazy
  def filter_map(&block)
    Enumerator::Lazy.new(self) do |y, *v|
      r = block.call(*v)
      y << r if r
    end
  end

  def compact
    Enumerator::Lazy.new(self) do |y, *v|
      e = v.size > 1 ? v : v[0]
      y << e unless e.nil?
    end
  end

  def filter(&block)
    select(&block)
  end
end

class Range
  def sum(init = 0)
    b = self.begin
    e = self.end
    if !block_given? && b.is_a?(Integer) && e.is_a?(Integer) &&
       (init.is_a?(Integer) || init.is_a?(Rational))
      e -= 1 if exclude_end?
      return init if e < b
      n = e - b + 1
      return init + b if n == 1
      return init + (n.even? ? (n / 2) * (b + e) : n * ((b + e) / 2))
    end
    super
  end

  alias_method :__corral_range_min, :min
  alias_method :__corral_range_max, :max
  def min(*args, &block)
    args.empty? ? __corral_range_min(&block) : super
  end

  def max(*args, &block)
    args.empty? ? __corral_range_max(&block) : super
  end

  def step(n = 1, &block)
    b = self.begin
    numeric = b.is_a?(Numeric)
    raise TypeError, "no implicit conversion of #{n.class} into Integer" unless n.is_a?(Numeric)
    raise ArgumentError, "step can't be 0" if n == 0
    unless block
      raise ArgumentError, "step can't be negative" if n < 0 && !numeric
      return Enumerator.new { |y| __corral_step(n) { |x| y << x } }
    end
    raise ArgumentError, "step can't be negative" if n < 0
    __corral_step(n, &block)
    self
  end

  def %(n)
    step(n)
  end

  def __corral_step(n)
    b = self.begin
    e = self.end
    if b.is_a?(Numeric)
      if b.is_a?(Float) || e.is_a?(Float) || n.is_a?(Float)
        Corral.float_step(b.to_f, e.nil? ? nil : e.to_f, n.to_f, exclude_end?) { |x| yield x }
        return
      end
      i = b
      if n > 0
        while e.nil? || (exclude_end? ? i < e : i <= e)
          yield i
          i += n
        end
      else
        while exclude_end? ? i > e : i >= e
          yield i
          i += n
        end
      end
    else
      i = 0
      each do |x|
        yield x if i % n == 0
        i += 1
      end
    end
  end

  alias_method :__corral_range_cover?, :cover?
  def cover?(v)
    return __corral_range_cover?(v) unless v.is_a?(Range)
    b = self.begin
    e = self.end
    vb = v.begin
    ve = v.end
    return false if !e.nil? && ve.nil?
    return false if !b.nil? && vb.nil?
    if !vb.nil? && !ve.nil?
      c = vb <=> ve
      return false if c.nil? || c > (v.exclude_end? ? -1 : 0)
    end
    return false if !vb.nil? && !__corral_range_cover?(vb)
    c = e.nil? ? 1 : (e <=> ve)
    c = 1 if c.nil?
    return c >= 0 if exclude_end? == v.exclude_end?
    return c > 0 if exclude_end?
    return true if c >= 0
    vmax = begin
      v.max
    rescue TypeError
      nil
    end
    return false if vmax.nil?
    (e <=> vmax).to_i >= 0
  end
end

class String
  def scan(pattern)
    raise TypeError, "wrong argument type #{pattern.class} (expected Regexp)" unless pattern.is_a?(String)
    found = []
    i = 0
    step = pattern.empty? ? 1 : pattern.size
    while i <= size && (j = index(pattern, i))
      found << pattern.dup
      i = j + step
    end
    return found unless block_given?
    found.each { |m| yield m }
    self
  end

  def +@
    frozen? ? dup : self
  end

  def -@
    frozen? ? self : dup.freeze
  end

  def ascii_only?
    each_byte { |b| return false if b >= 128 }
    true
  end
end

class Symbol
  def start_with?(*prefixes)
    to_s.start_with?(*prefixes)
  end

  def end_with?(*suffixes)
    to_s.end_with?(*suffixes)
  end
end

class Time
  def utc_offset
    return 0 if utc?
    Time.utc(year, mon, day, hour, min, sec).to_i - to_i
  end
  alias_method :gmt_offset, :utc_offset
  alias_method :gmtoff, :utc_offset

  def strftime(format)
    format = format.to_s
    out = ""
    i = 0
    n = format.size
    while i < n
      ch = format[i]
      if ch != "%" || i + 1 >= n
        out << ch
        i += 1
        next
      end
      j = i + 1
      flags = ""
      while j < n && "-_0^#".include?(format[j])
        flags << format[j]
        j += 1
      end
      width = nil
      while j < n && format[j] >= "0" && format[j] <= "9"
        width = (width || 0) * 10 + format[j].to_i
        j += 1
      end
      colons = 0
      while j < n && format[j] == ":"
        colons += 1
        j += 1
      end
      if j >= n
        out << format[i, n - i]
        break
      end
      s = Corral.tfield(self, format[j], flags, width, colons)
      out << (s.nil? ? format[i, j - i + 1] : s)
      i = j + 1
    end
    out
  end
end
)RUBY";

}  // namespace corral::sandbox::ruby
