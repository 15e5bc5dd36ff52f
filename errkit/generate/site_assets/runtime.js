/* errkit runtime for the browser: Python semantics for the catalogue's expression language.
 *
 * The expressions of `suggest` (errkit/core/expr.py) are compiled to JavaScript by errkit/generate/js.py
 * into suggest.js, which calls the functions below. Values keep their Python types:
 *   None -> null, bool -> boolean, int -> BigInt, float -> number, str -> string,
 *   list -> Array, tuple -> Array marked by tuple().
 * Every operator follows Python (floor division and modulo signs, negative indexes, `in`,
 * tuple/list equality, chained comparisons) and raises a PyError where Python raises.
 * `h` holds a twin of every helper in errkit/core/helpers.py, plus the builtins expressions may call;
 * tests/site/test_site_pages.py checks that both sides agree on the whole catalogue.
 *
 * Also here: values.parse() of errkit/core/values.py (typed values read back from a message) and
 * str()/repr() of values, so the page shows what `errkit explain` prints.
 */
(function (root, factory) {
  "use strict";
  var api = factory();
  if (typeof module === "object" && module.exports) module.exports = api;
  else root.ErrkitRuntime = api;
})(typeof self !== "undefined" ? self : this, function () {
  "use strict";

  // -- errors -------------------------------------------------------------------------------------

  function PyError(type, message) {
    var err = new Error(type + ": " + message);
    err.pyType = type;
    return err;
  }

  // -- types --------------------------------------------------------------------------------------

  var TUPLE = typeof Symbol === "function" ? Symbol("tuple") : "__tuple__";

  function tuple(items) {
    Object.defineProperty(items, TUPLE, { value: true });
    return items;
  }

  function isTuple(x) {
    return Array.isArray(x) && x[TUPLE] === true;
  }

  function kind(x) {
    if (x === null || x === undefined) return "NoneType";
    switch (typeof x) {
      case "boolean": return "bool";
      case "bigint": return "int";
      case "number": return "float";
      case "string": return "str";
      default:
        if (Array.isArray(x)) return isTuple(x) ? "tuple" : "list";
        return "object";
    }
  }

  function isNumeric(x) {
    var t = typeof x;
    return t === "boolean" || t === "bigint" || t === "number";
  }

  function isIntLike(x) {
    return typeof x === "bigint" || typeof x === "boolean";
  }

  function big(x) { // bool or int -> BigInt
    return typeof x === "boolean" ? (x ? 1n : 0n) : x;
  }

  function toFloat(x) { // bool, int or float -> number, as Python's float(x) for numbers
    if (typeof x === "number") return x;
    var f = Number(big(x));
    if (!isFinite(f)) throw PyError("OverflowError", "int too large to convert to float");
    return f;
  }

  function truthy(x) {
    switch (kind(x)) {
      case "NoneType": return false;
      case "bool": return x;
      case "int": return x !== 0n;
      case "float": return x !== 0;
      case "str": return x.length > 0;
      case "list": case "tuple": return x.length > 0;
      default: return true;
    }
  }

  function codePoints(s) {
    return Array.from(s);
  }

  function strLen(s) {
    return /[\uD800-\uDFFF]/.test(s) ? codePoints(s).length : s.length;
  }

  // -- equality and ordering ----------------------------------------------------------------------

  function eq(a, b) {
    if (a === null || a === undefined || b === null || b === undefined) {
      return (a === null || a === undefined) && (b === null || b === undefined);
    }
    if (isNumeric(a) && isNumeric(b)) {
      if (isIntLike(a) && isIntLike(b)) return big(a) === big(b);
      // a BigInt and a number compare by their exact mathematical values in JavaScript, as in Python
      return big(a) == big(b); // eslint-disable-line eqeqeq
    }
    var ka = kind(a), kb = kind(b);
    if (ka !== kb) return false;
    if (ka === "str") return a === b;
    if (ka === "list" || ka === "tuple") {
      if (a.length !== b.length) return false;
      for (var i = 0; i < a.length; i++) if (!(a[i] === b[i] || eq(a[i], b[i]))) return false;
      return true;
    }
    return a === b;
  }

  function compareStr(a, b) { // by code point, as Python
    if (a === b) return 0;
    var ca = codePoints(a), cb = codePoints(b);
    var n = Math.min(ca.length, cb.length);
    for (var i = 0; i < n; i++) {
      var x = ca[i].codePointAt(0), y = cb[i].codePointAt(0);
      if (x !== y) return x < y ? -1 : 1;
    }
    return ca.length === cb.length ? 0 : (ca.length < cb.length ? -1 : 1);
  }

  var OPS = { "<": "__lt__", "<=": "__le__", ">": "__gt__", ">=": "__ge__" };

  function order(op, a, b) {
    if (isNumeric(a) && isNumeric(b)) {
      var x = big(a), y = big(b);
      switch (op) {
        case "<": return x < y;
        case "<=": return x <= y;
        case ">": return x > y;
        default: return x >= y;
      }
    }
    var ka = kind(a), kb = kind(b);
    if (ka === "str" && kb === "str") {
      var c = compareStr(a, b);
      return op === "<" ? c < 0 : op === "<=" ? c <= 0 : op === ">" ? c > 0 : c >= 0;
    }
    if ((ka === "list" || ka === "tuple") && ka === kb) {
      var n = Math.min(a.length, b.length);
      for (var i = 0; i < n; i++) {
        if (!(a[i] === b[i] || eq(a[i], b[i]))) {
          if (op === "<" || op === "<=") return order("<", a[i], b[i]);
          return order(">", a[i], b[i]);
        }
      }
      return order(op, BigInt(a.length), BigInt(b.length));
    }
    if (!(op in OPS)) throw PyError("TypeError", "bad comparison");
    throw PyError("TypeError", "'" + op + "' not supported between instances of '" + ka + "' and '" + kb + "'");
  }

  function contains(container, item) {
    var k = kind(container);
    if (k === "list" || k === "tuple") {
      for (var i = 0; i < container.length; i++) {
        if (container[i] === item || eq(container[i], item)) return true;
      }
      return false;
    }
    if (k === "str") {
      if (kind(item) !== "str") {
        throw PyError("TypeError", "'in <string>' requires string as left operand, not " + kind(item));
      }
      return container.indexOf(item) >= 0;
    }
    throw PyError("TypeError", "argument of type '" + k + "' is not iterable");
  }

  function compareOp(op, a, b) {
    switch (op) {
      case "==": return eq(a, b);
      case "!=": return !eq(a, b);
      case "in": return contains(b, a);
      case "not in": return !contains(b, a);
      case "is": return a === b || (a === null && b === undefined) || (a === undefined && b === null);
      case "is not": return !compareOp("is", a, b);
      default: return order(op, a, b);
    }
  }

  // a < b < c: each operand evaluated once, left to right, stopping at the first false link
  function compare(left, links) {
    var value = left;
    for (var i = 0; i < links.length; i++) {
      var right = links[i][1]();
      if (!compareOp(links[i][0], value, right)) return false;
      value = right;
    }
    return true;
  }

  function and_() {
    var value = true;
    for (var i = 0; i < arguments.length; i++) {
      value = arguments[i]();
      if (!truthy(value)) return value;
    }
    return value;
  }

  function or_() {
    var value = false;
    for (var i = 0; i < arguments.length; i++) {
      value = arguments[i]();
      if (truthy(value)) return value;
    }
    return value;
  }

  // -- arithmetic ---------------------------------------------------------------------------------

  function floatDivmod(vx, wx) { // CPython's float_divmod
    if (wx === 0) throw PyError("ZeroDivisionError", "float modulo by zero");
    var mod = vx % wx;
    var div = (vx - mod) / wx;
    if (mod !== 0) { // C's `if (mod)`: NaN counts as true there, as false in JavaScript
      if ((wx < 0) !== (mod < 0)) {
        mod += wx;
        div -= 1.0;
      }
    } else {
      mod = (1 / wx < 0) ? -0.0 : 0.0;
    }
    var floordiv;
    if (div !== 0) {
      floordiv = Math.floor(div);
      if (div - floordiv > 0.5) floordiv += 1.0;
    } else {
      floordiv = (vx / wx < 0 || Object.is(vx / wx, -0)) ? -0.0 : 0.0;
    }
    return [floordiv, mod];
  }

  function intFloorDiv(a, b) {
    if (b === 0n) throw PyError("ZeroDivisionError", "integer division or modulo by zero");
    var q = a / b;
    if ((a % b !== 0n) && ((a < 0n) !== (b < 0n))) q -= 1n;
    return q;
  }

  function intMod(a, b) {
    if (b === 0n) throw PyError("ZeroDivisionError", "integer modulo by zero");
    var r = a % b;
    if (r !== 0n && ((r < 0n) !== (b < 0n))) r += b;
    return r;
  }

  var SSIZE_MAX = 9223372036854775807n; // a repeat count must fit Python's Py_ssize_t
  var MAX_ITEMS = 134217728n; // 2**27 items: more than any message asks for, and the page stays responsive

  function repeat(seq, n) {
    var times = big(n);
    if (times > SSIZE_MAX || times < -SSIZE_MAX - 1n) throw PyError("OverflowError", "cannot fit 'int' into an index-sized integer");
    var isStr = kind(seq) === "str";
    if (times <= 0n || seq.length === 0) return isStr ? "" : isTuple(seq) ? tuple([]) : [];
    var size = BigInt(isStr ? strLen(seq) : seq.length) * times;
    if (isStr) {
      if (size > SSIZE_MAX) throw PyError("OverflowError", "repeated string is too long");
      try {
        return seq.repeat(Number(times));
      } catch (err) { // longer than the engine's longest string
        throw PyError("MemoryError", "a string of " + size + " characters");
      }
    }
    if (size > MAX_ITEMS) throw PyError("MemoryError", "a sequence of " + size + " items");
    var out = [];
    for (var i = 0n; i < times; i++) out.push.apply(out, seq);
    return isTuple(seq) ? tuple(out) : out;
  }

  function unsupported(op, a, b) {
    return PyError("TypeError", "unsupported operand type(s) for " + op + ": '" + kind(a) + "' and '" + kind(b) + "'");
  }

  function add(a, b) {
    if (isNumeric(a) && isNumeric(b)) {
      if (isIntLike(a) && isIntLike(b)) return big(a) + big(b);
      return toFloat(a) + toFloat(b);
    }
    var ka = kind(a), kb = kind(b);
    if (ka === "str" && kb === "str") return a + b;
    if ((ka === "list" || ka === "tuple") && ka === kb) {
      var out = a.concat(b);
      return ka === "tuple" ? tuple(out) : out;
    }
    if (ka === kb || !(ka === "str" || ka === "list" || ka === "tuple")) throw unsupported("+", a, b);
    throw PyError("TypeError", "can only concatenate " + ka + " (not \"" + kb + "\") to " + ka);
  }

  function sub(a, b) {
    if (isNumeric(a) && isNumeric(b)) {
      if (isIntLike(a) && isIntLike(b)) return big(a) - big(b);
      return toFloat(a) - toFloat(b);
    }
    throw unsupported("-", a, b);
  }

  function mul(a, b) {
    if (isNumeric(a) && isNumeric(b)) {
      if (isIntLike(a) && isIntLike(b)) return big(a) * big(b);
      return toFloat(a) * toFloat(b);
    }
    var ka = kind(a), kb = kind(b);
    if ((ka === "str" || ka === "list" || ka === "tuple") && isIntLike(b)) return repeat(a, b);
    if ((kb === "str" || kb === "list" || kb === "tuple") && isIntLike(a)) return repeat(b, a);
    if (ka === "str" || ka === "list" || ka === "tuple" || kb === "str" || kb === "list" || kb === "tuple") {
      throw PyError("TypeError", "can't multiply sequence by non-int of type '" + (isNumeric(b) || kb === "NoneType" ? kb : ka) + "'");
    }
    throw unsupported("*", a, b);
  }

  // x (a finite number) as its exact binary value: (-1)**negative * mantissa * 2**shift
  function binary(x) {
    var view = new DataView(new ArrayBuffer(8));
    view.setFloat64(0, x);
    var hi = view.getUint32(0), lo = view.getUint32(4);
    var exponent = (hi >>> 20) & 0x7ff;
    var mantissa = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
    if (exponent === 0) exponent = 1;
    else mantissa |= 1n << 52n;
    return { negative: hi >>> 31 === 1, mantissa: mantissa, shift: BigInt(exponent - 1075) };
  }

  function ldexp(x, e) { // x * 2**e, exact whenever the result is representable
    for (; e > 1000; e -= 1000) x *= Math.pow(2, 1000);
    for (; e < -1000; e += 1000) x *= Math.pow(2, -1000);
    return x * Math.pow(2, e);
  }

  // num / den (BigInts) rounded once to the nearest double, ties to even: Python's int / int (and
  // the exact value of float ** int, which Math.pow may miss by an ulp). Infinity when too large.
  function ratioToFloat(num, den) {
    var negative = (num < 0n) !== (den < 0n);
    if (num < 0n) num = -num;
    if (den < 0n) den = -den;
    if (num === 0n) return negative ? -0 : 0;
    var s = 55n - (bitLength(num) - bitLength(den)); // num * 2**s / den has 55 or 56 bits
    var n2 = s >= 0n ? num << s : num, d2 = s >= 0n ? den : den << -s;
    var q = n2 / d2, sticky = n2 % d2 !== 0n;
    var ulp = bitLength(q) - 53n - s; // the exponent of the last bit a double keeps
    if (ulp < -1074n) ulp = -1074n; // subnormal
    var drop = ulp + s, kept = q >> drop, rest = q - (kept << drop), half = 1n << (drop - 1n);
    if (rest > half || (rest === half && (sticky || (kept & 1n) === 1n))) kept += 1n;
    var value = ldexp(Number(kept), Number(ulp));
    return negative ? -value : value;
  }

  function truediv(a, b) {
    if (isNumeric(a) && isNumeric(b)) {
      if (isIntLike(a) && isIntLike(b)) {
        if (big(b) === 0n) throw PyError("ZeroDivisionError", "division by zero");
        var ratio = ratioToFloat(big(a), big(b));
        if (!isFinite(ratio)) throw PyError("OverflowError", "integer division result too large for a float");
        return ratio;
      }
      var y = toFloat(b);
      if (y === 0) throw PyError("ZeroDivisionError", "float division by zero");
      return toFloat(a) / y;
    }
    throw unsupported("/", a, b);
  }

  function floordiv(a, b) {
    if (isNumeric(a) && isNumeric(b)) {
      if (isIntLike(a) && isIntLike(b)) return intFloorDiv(big(a), big(b));
      if (toFloat(b) === 0) throw PyError("ZeroDivisionError", "float floor division by zero");
      return floatDivmod(toFloat(a), toFloat(b))[0];
    }
    throw unsupported("//", a, b);
  }

  function mod(a, b) {
    if (isNumeric(a) && isNumeric(b)) {
      if (isIntLike(a) && isIntLike(b)) return intMod(big(a), big(b));
      return floatDivmod(toFloat(a), toFloat(b))[1];
    }
    if (kind(a) === "str") throw PyError("NotImplemented", "printf-style string formatting is not supported on the site");
    throw unsupported("%", a, b);
  }

  function pow(a, b) {
    if (isNumeric(a) && isNumeric(b)) {
      if (isIntLike(a) && isIntLike(b)) {
        var x = big(a), y = big(b);
        if (y >= 0n) return x ** y;
        if (x === 0n) throw PyError("ZeroDivisionError", "0.0 cannot be raised to a negative power");
        return Math.pow(Number(x), Number(y));
      }
      var fx = toFloat(a), fy = toFloat(b);
      if (fx === 0 && fy < 0) throw PyError("ZeroDivisionError", "0.0 cannot be raised to a negative power");
      if (fx < 0 && fy !== Math.floor(fy) && isFinite(fy)) throw PyError("NotImplemented", "complex results are not supported");
      var r;
      if (isIntLike(b) && big(b) > 0n && big(b) <= 1024n && isFinite(fx) && fx !== 0) { // the language's `x ** k`
        var p = binary(fx), n = big(b), m = p.mantissa ** n, e = p.shift * n;
        r = e >= 0n ? ratioToFloat(m << e, 1n) : ratioToFloat(m, 1n << -e);
        if (p.negative && (n & 1n) === 1n) r = -r;
      } else {
        r = Math.pow(fx, fy);
      }
      if (!isFinite(r) && isFinite(fx) && isFinite(fy)) throw PyError("OverflowError", "(34, 'Numerical result out of range')");
      return r;
    }
    throw unsupported("** or pow()", a, b);
  }

  function neg(a) {
    if (isIntLike(a)) return -big(a);
    if (typeof a === "number") return -a;
    throw PyError("TypeError", "bad operand type for unary -: '" + kind(a) + "'");
  }

  function pos(a) {
    if (isIntLike(a)) return big(a);
    if (typeof a === "number") return a;
    throw PyError("TypeError", "bad operand type for unary +: '" + kind(a) + "'");
  }

  function not_(a) {
    return !truthy(a);
  }

  // -- subscripts ---------------------------------------------------------------------------------

  function Slice(start, stop, step) {
    this.start = start === undefined ? null : start;
    this.stop = stop === undefined ? null : stop;
    this.step = step === undefined ? null : step;
  }

  function slice(start, stop, step) {
    return new Slice(start, stop, step);
  }

  function sliceIndex(x) {
    if (x === null || x === undefined) return null;
    if (!isIntLike(x)) throw PyError("TypeError", "slice indices must be integers or None or have an __index__ method");
    return big(x);
  }

  function sliceItems(seq, s) {
    var n = BigInt(seq.length);
    var step = sliceIndex(s.step);
    if (step === null) step = 1n;
    if (step === 0n) throw PyError("ValueError", "slice step cannot be zero");
    var start = sliceIndex(s.start), stop = sliceIndex(s.stop);
    var lower = step < 0n ? -1n : 0n, upper = step < 0n ? n - 1n : n;
    function adjust(v, dflt) {
      if (v === null) return dflt;
      if (v < 0n) {
        v += n;
        if (v < lower) v = lower;
      } else if (v > upper) {
        v = upper;
      }
      return v;
    }
    start = adjust(start, step < 0n ? upper : lower);
    stop = adjust(stop, step < 0n ? lower : upper);
    var out = [];
    if (step > 0n) for (var i = start; i < stop; i += step) out.push(seq[Number(i)]);
    else for (var j = start; j > stop; j += step) out.push(seq[Number(j)]);
    return out;
  }

  function getitem(obj, index) {
    var k = kind(obj);
    if (k !== "list" && k !== "tuple" && k !== "str") {
      throw PyError("TypeError", "'" + k + "' object is not subscriptable");
    }
    var seq = k === "str" ? codePoints(obj) : obj;
    if (index instanceof Slice) {
      var items = sliceItems(seq, index);
      if (k === "str") return items.join("");
      return k === "tuple" ? tuple(items) : items;
    }
    if (!isIntLike(index)) {
      throw PyError("TypeError", (k === "str" ? "string" : k) + " indices must be integers" + (k === "str" ? "" : " or slices") + ", not " + kind(index));
    }
    var i = big(index);
    var n = BigInt(seq.length);
    if (i < 0n) i += n;
    if (i < 0n || i >= n) throw PyError("IndexError", (k === "str" ? "string" : k) + " index out of range");
    return seq[Number(i)];
  }

  // -- helpers: twins of errkit/core/helpers.py and the builtins expressions may call --------------------

  var LIMIT = 18446744073709551616n; // helpers._LIMIT: 2**64
  var BASES = [2n, 3n, 5n, 7n, 11n, 13n, 17n, 19n, 23n, 29n, 31n, 37n]; // helpers._BASES

  function iterate(x) {
    var k = kind(x);
    if (k === "list" || k === "tuple") return x.slice();
    if (k === "str") return codePoints(x);
    throw PyError("TypeError", "'" + k + "' object is not iterable");
  }

  function arity(name, args, low, high) {
    if (args.length < low || args.length > high) {
      throw PyError("TypeError", name + "() takes " + (low === high ? low : low + " to " + high) + " arguments (" + args.length + " given)");
    }
  }

  var INT_LITERAL = /^[+-]?[0-9]+(?:_[0-9]+)*$/;
  var FLOAT_LITERAL = /^[+-]?(?:(?:[0-9](?:_?[0-9])*)?\.[0-9](?:_?[0-9])*|[0-9](?:_?[0-9])*\.?)(?:[eE][+-]?[0-9](?:_?[0-9])*)?$/;
  var FLOAT_SPECIAL = /^([+-]?)(inf|infinity|nan)$/i;

  function pyStrip(s) {
    return s.replace(/^[\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+|[\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/g, "");
  }

  function int_(x) {
    var k = kind(x);
    if (k === "bool" || k === "int") return big(x);
    if (k === "float") {
      if (isNaN(x)) throw PyError("ValueError", "cannot convert float NaN to integer");
      if (!isFinite(x)) throw PyError("OverflowError", "cannot convert float infinity to integer");
      return BigInt(Math.trunc(x));
    }
    if (k === "str") {
      var s = pyStrip(x);
      if (!INT_LITERAL.test(s)) throw PyError("ValueError", "invalid literal for int() with base 10: " + repr(x));
      return BigInt(s.replace(/_/g, ""));
    }
    throw PyError("TypeError", "int() argument must be a string, a bytes-like object or a real number, not '" + k + "'");
  }

  function float_(x) {
    var k = kind(x);
    if (k === "bool" || k === "int" || k === "float") return toFloat(x);
    if (k === "str") {
      var s = pyStrip(x);
      var special = FLOAT_SPECIAL.exec(s);
      if (special) {
        var v = special[2].toLowerCase() === "nan" ? NaN : Infinity;
        return special[1] === "-" ? -v : v;
      }
      if (!FLOAT_LITERAL.test(s)) throw PyError("ValueError", "could not convert string to float: " + repr(x));
      return Number(s.replace(/_/g, ""));
    }
    throw PyError("TypeError", "float() argument must be a string or a real number, not '" + k + "'");
  }

  function bitLength(n) {
    if (n < 0n) n = -n;
    return n === 0n ? 0n : BigInt(n.toString(2).length);
  }

  function divisors(n) { // helpers.divisors: n factored, never walked
    n = int_(n);
    if (n < 1n || n > LIMIT) return [];
    var factors = new Map();
    function add(p) { factors.set(p, (factors.get(p) || 0) + 1); }
    BASES.forEach(function (p) {
      while (n % p === 0n) { add(p); n /= p; }
    });
    var left = n > 1n ? [n] : [];
    while (left.length) {
      var m = left.pop();
      if (isPrime(m)) {
        add(m);
      } else {
        var f = rho(m);
        left.push(f, m / f);
      }
    }
    var found = [1n];
    Array.from(factors.keys()).sort(function (a, b) { return a < b ? -1 : a > b ? 1 : 0; }).forEach(function (p) {
      var next = [];
      found.forEach(function (d) {
        var power = 1n;
        for (var k = 0; k <= factors.get(p); k++) { next.push(d * power); power *= p; }
      });
      found = next;
    });
    return found.sort(function (a, b) { return a < b ? -1 : a > b ? 1 : 0; });
  }

  function powMod(base, exponent, modulus) {
    var result = 1n;
    base %= modulus;
    while (exponent > 0n) {
      if (exponent & 1n) result = result * base % modulus;
      base = base * base % modulus;
      exponent >>= 1n;
    }
    return result;
  }

  function isPrime(n) { // helpers._is_prime: Miller-Rabin, n > 1 and no base divides it
    var d = n - 1n, s = 0;
    while (d % 2n === 0n) { d /= 2n; s++; }
    outer: for (var i = 0; i < BASES.length; i++) {
      var x = powMod(BASES[i], d, n);
      if (x === 1n || x === n - 1n) continue;
      for (var r = 0; r < s - 1; r++) {
        x = x * x % n;
        if (x === n - 1n) continue outer;
      }
      return false;
    }
    return true;
  }

  function rho(n) { // helpers._rho: Brent's variant of Pollard's rho
    for (var c = 1n; ; c++) {
      var x = 2n, y = 2n, ys = 2n, g = 1n, r = 1n, q = 1n;
      while (g === 1n) {
        x = y;
        for (var i = 0n; i < r; i++) y = (y * y + c) % n;
        var k = 0n;
        while (k < r && g === 1n) {
          ys = y;
          var batch = r - k < 64n ? r - k : 64n;
          for (var j = 0n; j < batch; j++) {
            y = (y * y + c) % n;
            q = q * (x > y ? x - y : y - x) % n;
          }
          g = gcd(q, n);
          k += 64n;
        }
        r *= 2n;
      }
      if (g === n) {
        g = 1n;
        while (g === 1n) {
          ys = (ys * ys + c) % n;
          g = gcd(x - ys, n);
        }
      }
      if (g !== n) return g;
    }
  }

  function aligned_divisors(n, m, atMost) { // fixes.aligned_divisors
    var found = divisors(n);
    m = int_(m);
    var cap = int_(atMost);
    if (m <= 0n) return [];
    return found.filter(function (d) { return d % m === 0n && d <= cap; });
  }

  function hashable(x) {
    var k = kind(x);
    if (k === "list") throw PyError("TypeError", "unhashable type: 'list'");
    if (k === "tuple") x.forEach(hashable);
  }

  function sortedList(items) {
    var out = items.slice();
    // Python sorts with '<' only; a stable sort with this comparator gives the same order
    out.sort(function (a, b) {
      if (order("<", a, b)) return -1;
      if (order("<", b, a)) return 1;
      return 0;
    });
    return out;
  }

  function nearest(candidates, x) {
    var unique = [];
    iterate(candidates).forEach(function (c) {
      hashable(c);
      for (var i = 0; i < unique.length; i++) if (unique[i] === c || eq(unique[i], c)) return;
      unique.push(c);
    });
    var sorted = sortedList(unique);
    if (contains(sorted, x)) return [x];
    var below = sorted.filter(function (c) { return order("<", c, x); });
    var above = sorted.filter(function (c) { return order(">", c, x); });
    return (below.length ? [below[below.length - 1]] : []).concat(above.length ? [above[0]] : []);
  }

  function next_multiple(n, m) {
    return truthy(m) ? mul(neg(floordiv(neg(int_(n)), int_(m))), int_(m)) : int_(n);
  }

  function prev_multiple(n, m) {
    return truthy(m) ? max_(mul(floordiv(int_(n), int_(m)), int_(m)), int_(m)) : int_(n);
  }

  function is_power_of_two(n) {
    return typeof n === "bigint" && n > 0n && (n & (n - 1n)) === 0n;
  }

  function next_power_of_two(n) {
    n = int_(n);
    return n <= 1n ? 1n : 1n << bitLength(n - 1n);
  }

  function prev_power_of_two(n) {
    n = int_(n);
    return n <= 1n ? 1n : 1n << (bitLength(n) - 1n);
  }

  function is_finite(x) {
    if (typeof x === "bigint") return isFinite(toFloat(x));
    return typeof x === "number" && isFinite(x);
  }

  function gcd(a, b) {
    a = int_(a);
    b = int_(b);
    if (a < 0n) a = -a;
    if (b < 0n) b = -b;
    while (b !== 0n) {
      var t = a % b;
      a = b;
      b = t;
    }
    return a;
  }

  function common_divisors(a, b) {
    return divisors(gcd(a, b));
  }

  function extreme(name, op, args) {
    if (args.length === 0) throw PyError("TypeError", name + " expected at least 1 argument, got 0");
    var items = args.length === 1 ? iterate(args[0]) : args;
    if (!items.length) throw PyError("ValueError", name + "() iterable argument is empty");
    var best = items[0];
    for (var i = 1; i < items.length; i++) if (order(op, items[i], best)) best = items[i];
    return best;
  }

  function min_() { return extreme("min", "<", Array.prototype.slice.call(arguments)); }
  function max_() { return extreme("max", ">", Array.prototype.slice.call(arguments)); }

  function clamp(x, low, high) {
    return max_(low, min_(high, x));
  }

  function abs_(x) {
    if (isIntLike(x)) {
      var v = big(x);
      return v < 0n ? -v : v;
    }
    if (typeof x === "number") return Math.abs(x);
    throw PyError("TypeError", "bad operand type for abs(): '" + kind(x) + "'");
  }

  function len_(x) {
    var k = kind(x);
    if (k === "str") return BigInt(strLen(x));
    if (k === "list" || k === "tuple") return BigInt(x.length);
    throw PyError("TypeError", "object of type '" + k + "' has no len()");
  }

  function exactRound(x, ndigits) {
    // x (a finite number) rounded half-even at 10**-ndigits, on its exact binary value: the digits
    // as a BigInt numerator over 10**ndigits (ndigits >= 0) or times 10**-ndigits (ndigits < 0).
    var parts = binary(x), negative = parts.negative, mantissa = parts.mantissa, shift = parts.shift;
    var num = mantissa, den = 1n;
    if (shift >= 0n) num <<= shift;
    else den <<= -shift;
    var scale = 10n ** BigInt(Math.abs(ndigits));
    if (ndigits >= 0) num *= scale;
    else den *= scale;
    var q = num / den, r = num % den;
    if (2n * r > den || (2n * r === den && (q & 1n) === 1n)) q += 1n;
    return { negative: negative, digits: q }; // |x| rounded = digits * 10**-ndigits
  }

  function round_(x, ndigits) {
    var k = kind(x);
    if (ndigits === undefined || ndigits === null) {
      if (isIntLike(x)) return big(x);
      if (k !== "float") throw PyError("TypeError", "type " + k + " doesn't define __round__ method");
      if (isNaN(x)) throw PyError("ValueError", "cannot convert float NaN to integer");
      if (!isFinite(x)) throw PyError("OverflowError", "cannot convert float infinity to integer");
      var r0 = exactRound(x, 0);
      return r0.negative ? -r0.digits : r0.digits;
    }
    if (!isIntLike(ndigits)) throw PyError("TypeError", "'" + kind(ndigits) + "' object cannot be interpreted as an integer");
    var nd = Number(big(ndigits));
    if (isIntLike(x)) {
      if (nd >= 0) return big(x);
      var p = 10n ** BigInt(-nd), v = big(x);
      var q = intFloorDiv(v, p), rem = v - q * p;
      if (2n * rem > p || (2n * rem === p && (q & 1n) === 1n)) q += 1n;
      return q * p;
    }
    if (k !== "float") throw PyError("TypeError", "type " + k + " doesn't define __round__ method");
    if (!isFinite(x) || nd > 308) return x;
    if (nd < -308) return x < 0 || Object.is(x, -0) ? -0.0 : 0.0;
    var r = exactRound(x, nd);
    var text = r.digits.toString();
    var value = nd >= 0 ? Number(text + "e-" + nd) : Number(text + "e" + (-nd));
    return r.negative ? -value : value;
  }

  function sorted_(x) {
    return sortedList(iterate(x));
  }

  var h = {
    divisors: divisors,
    common_divisors: common_divisors,
    aligned_divisors: aligned_divisors,
    nearest: nearest,
    next_multiple: next_multiple,
    prev_multiple: prev_multiple,
    is_power_of_two: is_power_of_two,
    next_power_of_two: next_power_of_two,
    prev_power_of_two: prev_power_of_two,
    is_finite: is_finite,
    gcd: gcd,
    clamp: clamp,
    min: min_,
    max: max_,
    abs: abs_,
    len: len_,
    int: int_,
    float: float_,
    round: round_,
    sorted: sorted_,
  };

  var ARITY = {
    divisors: [1, 1], common_divisors: [2, 2], aligned_divisors: [3, 3], nearest: [2, 2], next_multiple: [2, 2],
    prev_multiple: [2, 2], is_power_of_two: [1, 1], next_power_of_two: [1, 1],
    prev_power_of_two: [1, 1], is_finite: [1, 1], gcd: [2, 2], clamp: [3, 3],
    min: [1, Infinity], max: [1, Infinity], abs: [1, 1], len: [1, 1], int: [1, 1], float: [1, 1],
    round: [1, 2], sorted: [1, 1],
  };

  function call(name, args) {
    if (!Object.prototype.hasOwnProperty.call(h, name)) throw PyError("NameError", "name '" + name + "' is not defined");
    arity(name, args, ARITY[name][0], ARITY[name][1]);
    return h[name].apply(null, args);
  }

  // -- bounds: errkit/core/bounds.py's Meter ------------------------------------------------------
  //
  // suggest.js compiles every `**`, `*`, `+` and `%`, every helper call, every comparison's operands,
  // every sliced value and every comprehension's items into calls of a Meter's methods, as
  // errkit/core/expr.guarded does for Python: the same checks, in the same order, charging the same
  // steps, so the page stops an expression with OverBound exactly where `errkit explain` does.

  var BOUNDS = {}; // errkit/core/bounds.py: `errkit generate` writes its limits here, no copy by hand

  function overBound(why) {
    return PyError("OverBound", why);
  }

  function bitsWhy() { return "an int of more than " + BOUNDS.MAX_BITS + " bits"; }
  function tooManyBits() { return overBound(bitsWhy()); }
  function tooManyItems() { return overBound("a sequence of more than " + BOUNDS.MAX_ITEMS + " items"); }

  function isSequence(x) {
    return typeof x === "string" || Array.isArray(x);
  }

  function seqLen(x) {
    return typeof x === "string" ? strLen(x) : x.length;
  }

  // helpers.COSTS: the steps a helper takes beyond reading its arguments
  function walkCost(n) { // helpers._walk: 8 per n**0.25 and 400; past LIMIT refused
    try {
      n = int_(n);
    } catch (err) {
      return 0;
    }
    if (n > LIMIT) throw overBound("divisors of a number over 2**64 are not computed");
    return n >= 1n ? 8 * root4(n) + 400 : 0;
  }

  function root4(n) { // helpers._root4: exact, from a float's
    var r = BigInt(Math.floor(Math.pow(Number(n), 0.25)));
    while (r ** 4n > n) r -= 1n;
    while ((r + 1n) ** 4n <= n) r += 1n;
    return Number(r);
  }

  var COSTS = {
    divisors: function (n) { return walkCost(n); },
    aligned_divisors: function (n) { return walkCost(n); },
    common_divisors: function (a, b) { return walkCost(gcd(a, b)); },
    round: function (x, ndigits) { // helpers._round_cost: round(x, -d) computes 10**d
      if (isIntLike(ndigits) && -big(ndigits) > BigInt(BOUNDS.MAX_ROUND_DIGITS)) {
        throw overBound("round() to more than " + BOUNDS.MAX_ROUND_DIGITS + " digits");
      }
      return 0;
    },
  };

  function Meter(steps) {
    this.left = steps === undefined ? BOUNDS.MAX_STEPS : steps;
  }

  Meter.prototype.charge = function (steps) {
    this.left -= steps;
    if (this.left < 0) throw overBound("more than " + BOUNDS.MAX_STEPS + " steps");
  };

  Meter.prototype.pow = function (base, exponent) { // the exponent is a literal 0..64 (vetted)
    if (isIntLike(base) && Number(bitLength(big(base))) * toFloat(exponent) > BOUNDS.MAX_BITS) throw tooManyBits();
    return pow(base, exponent);
  };

  Meter.prototype.mul = function (a, b) {
    if (isIntLike(a) && isIntLike(b)) {
      if (bitLength(big(a)) + bitLength(big(b)) > BigInt(BOUNDS.MAX_BITS)) throw tooManyBits();
    } else if (isSequence(a) || isSequence(b)) { // a repetition
      var times = isSequence(a) ? b : a;
      if (isIntLike(times)) {
        var items = BigInt(seqLen(isSequence(a) ? a : b)) * big(times);
        if (items > BigInt(BOUNDS.MAX_ITEMS)) throw tooManyItems();
        this.charge(items > 0n ? Number(items) : 0);
      }
    }
    return mul(a, b);
  };

  Meter.prototype.add = function (a, b) {
    if (isSequence(a) && isSequence(b)) { // a concatenation
      var items = seqLen(a) + seqLen(b);
      if (items > BOUNDS.MAX_ITEMS) throw tooManyItems();
      this.charge(items);
    }
    return add(a, b);
  };

  Meter.prototype.mod = function (a, b) {
    if (typeof a === "string") throw overBound("'%' formatting of a string (its width has no bound)");
    return mod(a, b);
  };

  Meter.prototype.v = function (value) { // read whole by a comparison or a slice
    if (isSequence(value)) this.charge(seqLen(value));
    return value;
  };

  // a helper's arguments read (a sequence's items, an int's bits, else 1 step each) and its own
  // cost charged first; OverBound for a result past MAX_BITS or MAX_ITEMS
  Meter.prototype.call = function (name, args) {
    var steps = 1;
    for (var i = 0; i < args.length; i++) {
      var arg = args[i];
      steps += isIntLike(arg) ? Number(bitLength(big(arg))) : isSequence(arg) ? seqLen(arg) : 1;
    }
    if (Object.prototype.hasOwnProperty.call(COSTS, name)) {
      try {
        steps += COSTS[name].apply(null, args);
      } catch (err) { // a cost that cannot be told: the helper itself raises what Python's cost raised
        if (err.pyType === "OverBound") throw err;
      }
    }
    this.charge(steps);
    var result = call(name, args);
    if (isIntLike(result)) {
      if (bitLength(big(result)) > BigInt(BOUNDS.MAX_BITS)) throw tooManyBits();
    } else if (isSequence(result) && seqLen(result) > BOUNDS.MAX_ITEMS) {
      throw tooManyItems();
    }
    return result;
  };

  Meter.prototype.each = function (items, weight) { // a comprehension's items; weight: the steps of one pass
    if (isSequence(items)) {
      if (seqLen(items) > BOUNDS.MAX_ITEMS) throw tooManyItems();
      this.charge(seqLen(items) * weight);
    }
    return items;
  };

  // bounds.unshowable: why a result is no value to show (null: it is one)
  function unshowable(value) {
    var todo = [value], shown = 0;
    while (todo.length) {
      var item = todo.pop();
      if (Array.isArray(item)) {
        shown += item.length;
        for (var i = 0; i < item.length; i++) todo.push(item[i]);
      } else if (isIntLike(item)) {
        var bits = bitLength(big(item));
        if (bits > BigInt(BOUNDS.MAX_BITS)) return bitsWhy();
        shown += 1 + Number(bits / 3n);
      } else if (typeof item === "string") {
        shown += strLen(item);
      } else if (!(item === null || item === undefined || typeof item === "number")) {
        return "not a value (" + kind(item) + ")";
      } else {
        shown += 1;
      }
      if (shown > BOUNDS.MAX_SHOWN) return "a result of more than " + BOUNDS.MAX_SHOWN + " characters";
    }
    return null;
  }

  // -- str() and repr() ---------------------------------------------------------------------------

  function floatRepr(x) {
    if (isNaN(x)) return "nan";
    if (!isFinite(x)) return x > 0 ? "inf" : "-inf";
    if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
    var parts = Math.abs(x).toExponential().split("e"); // shortest round-trip digits, as Python
    var digits = parts[0].replace(".", "");
    var exp = parseInt(parts[1], 10);
    var sign = x < 0 ? "-" : "";
    if (exp < -4 || exp >= 16) {
      var mant = digits.length > 1 ? digits[0] + "." + digits.slice(1) : digits;
      return sign + mant + "e" + (exp < 0 ? "-" : "+") + (Math.abs(exp) < 10 ? "0" : "") + Math.abs(exp);
    }
    var out;
    if (exp < 0) out = "0." + "0".repeat(-exp - 1) + digits;
    else if (digits.length > exp + 1) out = digits.slice(0, exp + 1) + "." + digits.slice(exp + 1);
    else out = digits + "0".repeat(exp + 1 - digits.length) + ".0";
    return sign + out;
  }

  // what str.isprintable() rejects: repr() escapes these (by the engine's Unicode tables, which may
  // be newer than Python's for characters Python does not know yet)
  var UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

  function strRepr(s) {
    var quote = s.indexOf("'") >= 0 && s.indexOf('"') < 0 ? '"' : "'";
    var out = quote;
    for (var ch of s) {
      var c = ch.codePointAt(0);
      if (ch === quote || ch === "\\") out += "\\" + ch;
      else if (ch === "\t") out += "\\t";
      else if (ch === "\n") out += "\\n";
      else if (ch === "\r") out += "\\r";
      else if (ch === " " || !UNPRINTABLE.test(ch)) out += ch;
      else if (c < 0x100) out += "\\x" + c.toString(16).padStart(2, "0");
      else if (c < 0x10000) out += "\\u" + c.toString(16).padStart(4, "0");
      else out += "\\U" + c.toString(16).padStart(8, "0");
    }
    return out + quote;
  }

  function repr(x) {
    switch (kind(x)) {
      case "NoneType": return "None";
      case "bool": return x ? "True" : "False";
      case "int": return x.toString();
      case "float": return floatRepr(x);
      case "str": return strRepr(x);
      case "list": return "[" + x.map(repr).join(", ") + "]";
      case "tuple": return "(" + x.map(repr).join(", ") + (x.length === 1 ? "," : "") + ")";
      default: return String(x);
    }
  }

  function str(x) {
    return kind(x) === "str" ? x : repr(x);
  }

  // explain._show: how `errkit explain` prints a value (sequences as "a, b", empty as "(none)")
  function show(x) {
    var k = kind(x);
    if (k === "list" || k === "tuple") {
      return x.length ? x.map(function (v) {
        var vk = kind(v);
        return vk === "list" || vk === "tuple" ? "(" + show(v) + ")" : show(v);
      }).join(", ") : "(none)";
    }
    return str(x);
  }

  // explain._jsonable: the value as plain JSON (ints as numbers where exact, else strings)
  function jsonable(x) {
    var k = kind(x);
    if (k === "list" || k === "tuple") return x.map(jsonable);
    if (k === "int") return (x <= 9007199254740991n && x >= -9007199254740991n) ? Number(x) : x.toString();
    if (k === "float" && isNaN(x)) return "nan";
    if (k === "float" && !isFinite(x)) return x > 0 ? "inf" : "-inf";
    return x === undefined ? null : x;
  }

  // -- values.parse --------------------------------------------------------------------------------

  var NAME = /[A-Za-z][A-Za-z0-9_]*/g;
  var DTYPE_NOISE = { dtype: 1, jnp: 1, np: 1, numpy: 1, jax: 1 };
  var SIMPLE_ESCAPES = { "\\": "\\", "'": "'", '"': '"', a: "\x07", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t", v: "\v", "\n": "" };

  // ast.literal_eval of text that starts and ends with the same quote: one string literal, or
  // several (implicit concatenation, or a tuple when separated by commas). null when Python's
  // literal_eval would fail (the raw text is then kept, as values.parse does).
  function literalEval(text) {
    if (text.indexOf("\0") >= 0) return null; // Python refuses source with a null character
    text = text.replace(/\r\n?/g, "\n"); // and reads it with universal newlines
    var i = 0, n = text.length, pieces = [], items = [], sawComma = false;
    function skipSpace() { while (i < n && /[ \t\f]/.test(text[i])) i++; }
    while (i < n) {
      skipSpace();
      if (i >= n) break;
      if (text[i] === ",") {
        if (!pieces.length) return null;
        items.push(pieces.join(""));
        pieces = [];
        sawComma = true;
        i++;
        continue;
      }
      var raw = false;
      var prefix = /^[rRuU]?/.exec(text.slice(i))[0];
      if (prefix) {
        raw = prefix === "r" || prefix === "R";
        i += prefix.length;
      }
      var q = text[i];
      if (q !== "'" && q !== '"') return null;
      var triple = text.substr(i, 3) === q + q + q;
      var close = triple ? q + q + q : q;
      i += close.length;
      var out = "";
      for (;;) {
        if (i >= n) return null;
        if (text.substr(i, close.length) === close) {
          i += close.length;
          break;
        }
        var ch = text[i];
        if (ch === "\n" && !triple) return null;
        if (ch !== "\\") {
          out += ch;
          i++;
          continue;
        }
        var nx = text[i + 1];
        if (nx === undefined) return null;
        if (raw) {
          out += ch + nx;
          i += 2;
          continue;
        }
        if (Object.prototype.hasOwnProperty.call(SIMPLE_ESCAPES, nx)) {
          out += SIMPLE_ESCAPES[nx];
          i += 2;
        } else if (/[0-7]/.test(nx)) {
          var oct = /^[0-7]{1,3}/.exec(text.slice(i + 1))[0];
          out += String.fromCodePoint(parseInt(oct, 8));
          i += 1 + oct.length;
        } else if (nx === "x" || nx === "u" || nx === "U") {
          var width = nx === "x" ? 2 : nx === "u" ? 4 : 8;
          var hex = text.substr(i + 2, width);
          if (!new RegExp("^[0-9a-fA-F]{" + width + "}$").test(hex)) return null;
          var cp = parseInt(hex, 16);
          if (cp > 0x10ffff) return null;
          out += String.fromCodePoint(cp);
          i += 2 + width;
        } else if (nx === "N") {
          return null; // named escapes need Python's Unicode name table
        } else {
          out += ch + nx; // unknown escapes stay as they are
          i += 2;
        }
      }
      pieces.push(out);
    }
    if (pieces.length) items.push(pieces.join(""));
    else if (!sawComma) return null;
    if (sawComma) return { value: tuple(items) };
    return { value: items[0] };
  }

  // values._number: a number as format() wrote it with a spec, as float() reads it
  function numberText(text) {
    return text.replace(/%+$/, "").replace(/,/g, "").replace(/_/g, "").replace(/^([-+]?)0+(?=inf|nan)/, "$1");
  }

  // values._SCALAR_TEXT: a NumPy or JAX scalar's repr, np.float32(0.125) or Array(0.25, dtype=float32)
  var SCALAR_TEXT = /^(?:(?:np|numpy)\.[a-z0-9]+\(([^()]*)\)|Array\(([^(),]*),[^()]*\))$/;

  // values._BYTE_UNITS: binary multiples, whatever the letter says
  var BYTE_UNITS = { "": 1, B: 1, BYTES: 1, K: 1024, M: 1048576, G: 1073741824, T: 1099511627776 };

  // values._TRACER: a JAX tracer's repr where a number was expected, read as its text
  var TRACER_TEXT = /^(?:[A-Za-z]*Tracer[(<][^()<>\n]*[)>]|Traced<[^<>\n]*>with<[^<>\n]*>)$/;

  // values._PLACEHOLDER: a number left out of a pasted message, read as its text (match.js gone())
  var PLACEHOLDER_TEXT = /^(?:<[A-Z]>|\.\.\.)$/;

  function parseValue(type, text) {
    text = pyStrip(text);
    if (text === "None") return null;
    if ((type === "int" || type === "float") && TRACER_TEXT.test(text)) return text;
    if ((type === "int" || type === "float") && PLACEHOLDER_TEXT.test(text)) return text; // values._PLACEHOLDER
    if ((type === "int" || type === "float") && text.endsWith(")")) {
      var scalar = SCALAR_TEXT.exec(text);
      if (scalar) text = pyStrip(scalar[1] !== undefined ? scalar[1] : scalar[2]);
    }
    switch (type) {
      case "int": {
        var digits = text.replace(/,/g, "").replace(/_/g, "").replace(/\.$/, ""); // values.parse: a full stop after a spec
        if (/^[-+]?[0-9]+$/.test(digits)) return int_(digits);
        var based = /^([-+]?)0([xXbBoO])(.+)$/.exec(digits); // format(255, "#x") is "0xff"
        if (based) {
          var n;
          try {
            n = BigInt("0" + based[2].toLowerCase() + based[3]);
          } catch (err) {
            throw PyError("ValueError", "invalid literal for int() with base 0: " + repr(text));
          }
          return based[1] === "-" ? -n : n;
        }
        // written with a float spec: format(3, "e") is "3.000000e+00", format(3, "%") "300.000000%"
        var number = float_(numberText(text)) / (text.endsWith("%") ? 100 : 1);
        if (!Number.isInteger(number)) throw PyError("ValueError", repr(text) + " is not an int");
        return BigInt(number);
      }
      case "float":
        return float_(numberText(text));
      case "bool":
        if (text === "True" || text === "False") return text === "True";
        return float_(numberText(text)) !== 0; // written with a spec: 1, +1, 1.00, 100%
      case "str":
        if (text.length >= 2 && text[0] === text[text.length - 1] && (text[0] === "'" || text[0] === '"')) {
          var lit = literalEval(text);
          return lit ? lit.value : text;
        }
        return text;
      case "dtype": {
        var names = (text.match(NAME) || []).filter(function (w) { return !DTYPE_NOISE[w]; });
        return names.length ? names[names.length - 1] : text;
      }
      case "shape":
        return tuple((text.match(/-?[0-9]+/g) || []).map(function (d) { return BigInt(d); }));
      case "bytes": { // values.parse: binary multiples, rounded as int(x * scale + 0.5)
        var size = /^([0-9]+(?:\.[0-9]+)?) ?([A-Za-z]*)$/.exec(text);
        var unit = size[2].toUpperCase();
        var scale = BYTE_UNITS[unit] !== undefined ? BYTE_UNITS[unit] : BYTE_UNITS[unit.charAt(0)];
        return BigInt(Math.floor(parseFloat(size[1]) * scale + 0.5));
      }
      default:
        throw PyError("ValueError", "unknown param type '" + type + "'");
    }
  }

  // format(x, '.Nf') as Python prints it (half-even on the exact value)
  function fixed(x, places) {
    if (!isFinite(x)) return floatRepr(x);
    var r = exactRound(x, places);
    var s = r.digits.toString().padStart(places + 1, "0");
    var body = places ? s.slice(0, s.length - places) + "." + s.slice(s.length - places) : s;
    return (r.negative ? "-" : "") + body;
  }

  return {
    LIMIT: LIMIT,
    PyError: PyError,
    tuple: tuple,
    isTuple: isTuple,
    kind: kind,
    truthy: truthy,
    eq: eq,
    compare: compare,
    and_: and_,
    or_: or_,
    add: add,
    sub: sub,
    mul: mul,
    truediv: truediv,
    floordiv: floordiv,
    mod: mod,
    pow: pow,
    neg: neg,
    pos: pos,
    not_: not_,
    slice: slice,
    getitem: getitem,
    call: call,
    Meter: Meter,
    unshowable: unshowable,
    BOUNDS: BOUNDS,
    iterate: iterate,
    h: h,
    repr: repr,
    str: str,
    show: show,
    jsonable: jsonable,
    parseValue: parseValue,
    literalEval: literalEval,
    fixed: fixed,
    round: round_,
    strip: pyStrip,
  };
});
