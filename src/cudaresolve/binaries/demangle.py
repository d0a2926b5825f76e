"""A small Itanium C++ ABI demangler for the names torch's libraries export. Pure.

``demangle("_ZN3c104cuda9SetDeviceEi")`` is ``"c10::cuda::SetDevice(int)"``. It covers what
extension modules import from libtorch and libc10: nested names, constructors and destructors,
operators, ABI tags, templates and their parameters, substitutions (``S_``, ``St``, ``Ss`` …),
pointers, references, cv-qualifiers, arrays, function types, integer literals, local names,
vtables and typeinfo, and the ``.cold``/``.isra.0`` clone suffixes. Anything else returns ``None``
and callers show the mangled name, which they always show beside the demangled one.

Bounded: inputs over ``MAX_INPUT`` characters are not tried, recursion stops at ``_MAX_DEPTH``
and any result over ``MAX_OUTPUT`` characters (substitutions can double a string each step)
gives up. The grammar is the Itanium C++ ABI's "Mangling" chapter
(https://itanium-cxx-abi.github.io/cxx-abi/abi.html#mangling).
"""

from __future__ import annotations

from typing import Final

__all__ = ["MAX_INPUT", "MAX_OUTPUT", "demangle"]

MAX_INPUT: Final = 4096
MAX_OUTPUT: Final = 8192
_MAX_DEPTH: Final = 64

_BUILTIN: Final = {
    "v": "void", "w": "wchar_t", "b": "bool", "c": "char", "a": "signed char", "h": "unsigned char",
    "s": "short", "t": "unsigned short", "i": "int", "j": "unsigned int", "l": "long", "m": "unsigned long",
    "x": "long long", "y": "unsigned long long", "n": "__int128", "o": "unsigned __int128", "f": "float",
    "d": "double", "e": "long double", "g": "__float128", "z": "...",
}
_BUILTIN_D: Final = {
    "n": "decltype(nullptr)", "h": "half", "s": "char16_t", "i": "char32_t", "u": "char8_t", "a": "auto",
    "c": "decltype(auto)",
}
_CHAR_TRAITS: Final = "<char, std::char_traits<char> >"
_STD_SUBS: Final = {
    "a": "std::allocator", "b": "std::basic_string", "s": "std::string", "i": "std::basic_istream" + _CHAR_TRAITS,
    "o": "std::basic_ostream" + _CHAR_TRAITS, "d": "std::basic_iostream" + _CHAR_TRAITS,
}
_OPERATORS: Final = {
    "nw": "new", "na": "new[]", "dl": "delete", "da": "delete[]", "ps": "+", "ng": "-", "ad": "&", "de": "*",
    "co": "~", "pl": "+", "mi": "-", "ml": "*", "dv": "/", "rm": "%", "an": "&", "or": "|", "eo": "^", "aS": "=",
    "pL": "+=", "mI": "-=", "mL": "*=", "dV": "/=", "rM": "%=", "aN": "&=", "oR": "|=", "eO": "^=", "ls": "<<",
    "rs": ">>", "lS": "<<=", "rS": ">>=", "eq": "==", "ne": "!=", "lt": "<", "gt": ">", "le": "<=", "ge": ">=",
    "ss": "<=>", "nt": "!", "aa": "&&", "oo": "||", "pp": "++", "mm": "--", "cm": ",", "pm": "->*", "pt": "->",
    "cl": "()", "ix": "[]", "qu": "?",
}
_LITERAL_SUFFIX: Final = {"j": "u", "l": "l", "m": "ul", "x": "ll", "y": "ull"}
_SPECIAL: Final = {"V": "vtable for ", "I": "typeinfo for ", "S": "typeinfo name for ", "T": "VTT for "}


class _Unsupported(Exception):
    """The name uses a part of the grammar this demangler leaves out (or is malformed)."""


def demangle(name: str) -> str | None:
    """The readable form of an Itanium-mangled ``name``; ``None`` when it is not one this module reads."""
    if not name.startswith("_Z") or len(name) > MAX_INPUT:
        return None
    try:
        return _Parser(name[2:]).top()
    except (_Unsupported, IndexError, ValueError, RecursionError):
        return None


_Arg = str | tuple[str, ...]  # a template argument; a tuple is a pack (``J...E``)


def _angle(args: list[_Arg]) -> str:
    text = "<" + ", ".join(a if isinstance(a, str) else ", ".join(a) for a in args)
    return text + (" >" if text.endswith(">") else ">")


def _with_args(name: str, args: list[_Arg]) -> str:
    return name + (" " if name.endswith("<") else "") + _angle(args)


def _base_name(text: str) -> str:
    """``std::basic_ostream<char, ...>`` -> ``basic_ostream``: what a constructor of that class is called."""
    if text.endswith(">"):
        depth = 0
        for at in range(len(text) - 1, -1, -1):
            depth += {">": 1, "<": -1}.get(text[at], 0)
            if depth == 0:
                text = text[:at]
                break
    return text.rsplit("::", 1)[-1]


def _reference(inner: str, mark: str) -> str:
    """``inner`` with ``&``/``&&`` applied, references collapsing as C++ does (``T& &&`` is ``T&``)."""
    if inner.endswith("]") and " [" in inner:  # a reference to an array: char const (&) [7]
        base, size = inner.rsplit(" [", 1)
        return f"{base} ({mark}) [{size}"
    if mark == "*" or not inner.endswith("&"):
        return inner + mark
    if inner.endswith("&&") and mark == "&":
        return inner[:-1]
    return inner


class _Parser:
    def __init__(self, text: str) -> None:
        self.s, self.i, self.depth = text, 0, 0
        self.subs: list[str] = []
        self.targs: list[_Arg] = []
        self.pending: list[_Arg] = []  # the template args of the name parsed last, outermost last
        self.pack_index: int | None = None  # which element of a pack a ``Dp`` expansion is at
        self.pack_len: int | None = None

    # -- helpers --------------------------------------------------------------------------
    def peek(self, k: int = 0) -> str:
        return self.s[self.i + k] if self.i + k < len(self.s) else ""

    def eat(self, prefix: str) -> bool:
        if self.s.startswith(prefix, self.i):
            self.i += len(prefix)
            return True
        return False

    def need(self, prefix: str) -> None:
        if not self.eat(prefix):
            raise _Unsupported(prefix)

    def add(self, text: str) -> str:
        if len(text) > MAX_OUTPUT:
            raise _Unsupported("too long")
        self.subs.append(text)
        return text

    def number(self) -> int:
        start = self.i
        while self.peek().isdigit():
            self.i += 1
        if start == self.i:
            raise _Unsupported("number")
        return int(self.s[start : self.i])

    def enter(self) -> None:
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise _Unsupported("depth")

    # -- encodings and names --------------------------------------------------------------
    def top(self) -> str:
        text = self.encoding()
        if self.i < len(self.s):
            if self.peek() != ".":
                raise _Unsupported("trailing")
            text += f" [clone {self.s[self.i:]}]"
        return text

    def encoding(self, *, local: bool = False) -> str:
        self.enter()
        if self.peek() == "T" and self.peek(1) in _SPECIAL:
            self.i += 2
            out = _SPECIAL[self.s[self.i - 1]] + self.type()
        elif self.eat("GV"):
            out = "guard variable for " + self.name()[0]
        else:
            name, template, plain, suffix = self.name()
            if template:
                self.targs = self.pending
            if self.i >= len(self.s) or self.peek() in ".E":
                out = name  # a variable
            else:
                ret = self.type() + " " if template and not plain else ""
                ret = "" if local else ret
                out = ret + name + self.params() + suffix
        self.depth -= 1
        return out

    def params(self) -> str:
        types: list[str] = []
        while self.i < len(self.s) and self.peek() not in ".E":
            if kind := self.type():  # an empty pack expands to nothing
                types.append(kind)
        return "()" if types == ["void"] else "(" + ", ".join(types) + ")"

    def name(self) -> tuple[str, bool, bool, str]:
        """(name, ends in template args, a constructor/destructor/conversion, method qualifiers)."""
        if self.eat("N"):
            return self.nested()
        if self.eat("Z"):
            outer = self.encoding(local=True)
            self.need("E")
            if self.eat("s"):
                inner, template, plain = "string literal", False, True
            else:
                inner, template, plain, _ = self.name()
            if self.eat("_") and self.peek().isdigit():  # a discriminator
                self.number()
                self.eat("_")
            return f"{outer}::{inner}", template, plain, ""
        if self.peek() == "S" and self.peek(1) != "t":
            base = self.substitution()
            args = self.template_args()
            self.pending = args
            return _with_args(base, args), True, False, ""
        prefix = "std::" if self.eat("St") else ""
        unqualified, plain = self.unqualified("")
        name = prefix + unqualified
        if self.peek() == "I":
            self.add(name)
            args = self.template_args()
            self.pending = args
            return _with_args(name, args), True, plain, ""
        return name, False, plain, ""

    def nested(self) -> tuple[str, bool, bool, str]:
        suffix = ""
        for letter, word in (("r", " restrict"), ("V", " volatile"), ("K", " const")):
            if self.eat(letter):
                suffix = word + suffix
        if self.eat("R"):
            suffix += " &"
        elif self.eat("O"):
            suffix += " &&"
        parts: str = ""
        last = ""  # the last plain component, the name of a constructor
        template = plain = False
        fresh = False  # ``parts`` came straight from a substitution table (not added again)
        while not self.eat("E"):
            if self.peek() == "I":
                if not parts:
                    raise _Unsupported("args first")
                if not fresh:
                    self.add(parts)
                args = self.template_args()
                self.pending = args
                parts = _with_args(parts, args)
                template, fresh = True, False
                if self.peek() != "E":
                    self.add(parts)
                    fresh = True
                continue
            if parts and not fresh and not template:
                self.add(parts)
            template, fresh = False, False
            if self.peek() == "S" and not parts:
                if self.eat("St"):
                    parts, fresh = "std", True
                    continue
                parts, fresh = self.substitution(), True
                last = _base_name(parts)
                continue
            if self.peek() == "T" and not parts:
                parts, fresh = self.template_param(), False
                continue
            piece, plain = self.unqualified(last)
            if not plain:
                last = piece.split("[", 1)[0]
            parts = f"{parts}::{piece}" if parts else piece
        return parts, template, plain, suffix

    def unqualified(self, enclosing: str) -> tuple[str, bool]:
        """One component; ``True`` with it when it is a constructor, destructor or conversion operator."""
        plain = False
        c = self.peek()
        if c.isdigit():
            text = self.source_name()
        elif c == "C" and self.peek(1) in "12345":
            self.i += 2
            text, plain = enclosing, True
        elif c == "D" and self.peek(1) in "01245":
            self.i += 2
            text, plain = "~" + enclosing, True
        elif self.eat("cv"):
            text, plain = "operator " + self.type(), True
        elif self.eat("li"):
            text = 'operator"" ' + self.source_name()
        elif self.s[self.i : self.i + 2] in _OPERATORS:
            op = _OPERATORS[self.s[self.i : self.i + 2]]
            self.i += 2
            text = "operator" + (" " if op[0].isalpha() else "") + op
        elif self.eat("L"):
            text = self.source_name()  # internal linkage
        else:
            raise _Unsupported(f"name {c!r}")
        if (plain and not enclosing) or not text:
            raise _Unsupported("constructor outside a class")
        while self.eat("B"):
            text += f"[abi:{self.source_name()}]"
        return text, plain

    def source_name(self) -> str:
        length = self.number()
        text = self.s[self.i : self.i + length]
        if len(text) != length:
            raise _Unsupported("short name")
        self.i += length
        return "(anonymous namespace)" if text.startswith("_GLOBAL__N") else text

    def substitution(self) -> str:
        self.need("S")
        c = self.peek()
        if c in _STD_SUBS:
            self.i += 1
            return _STD_SUBS[c]
        index = 0
        if c != "_":
            start = self.i
            while self.peek() and self.peek() != "_":
                self.i += 1
            index = int(self.s[start : self.i], 36) + 1
        self.need("_")
        return self.subs[index]

    def template_param(self) -> str:
        self.need("T")
        index = 0 if self.peek() == "_" else self.number() + 1
        self.need("_")
        if index >= len(self.targs):
            return f"auto:{index + 1}"
        arg = self.targs[index]
        if isinstance(arg, str):
            return arg
        self.pack_len = len(arg)
        if self.pack_index is None:
            return ", ".join(arg)
        return arg[self.pack_index] if self.pack_index < len(arg) else ""

    def template_args(self) -> list[_Arg]:
        self.need("I")
        self.enter()
        args: list[_Arg] = []
        while not self.eat("E"):
            if self.eat("L"):
                args.append(self.literal())
            elif self.eat("J"):
                pack: list[str] = []
                while not self.eat("E"):
                    pack.append(self.type())
                args.append(tuple(pack))
            elif self.eat("X"):
                args.append(self.template_param())  # only ``XT_E``: a parameter as an expression
                self.need("E")
            else:
                args.append(self.type())
        self.depth -= 1
        if len(_angle(args)) > MAX_OUTPUT:
            raise _Unsupported("too long")
        return args

    def expansion(self) -> str:
        """``Dp <type>``: the pattern once per element of the pack it names (``T&&...`` -> ``long&, int&&``)."""
        start, outer = self.i, (self.pack_index, self.pack_len)
        self.pack_index, self.pack_len = 0, None
        parts = [self.type()]
        end, count, mark = self.i, self.pack_len, len(self.subs)
        for index in range(1, count or 0):
            self.i, self.pack_index = start, index
            parts.append(self.type())
            del self.subs[mark:]
        self.i = end
        self.pack_index, self.pack_len = outer
        if count is None:
            return parts[0] + "..."
        return ", ".join(parts[:count])

    def literal(self) -> str:
        if self.eat("_Z"):
            text = self.encoding()
            self.need("E")
            return text
        kind = self.type()
        negative = self.eat("n")
        value = self.number()
        self.need("E")
        if kind == "bool":
            return "true" if value else "false"
        number = f"{'-' if negative else ''}{value}"
        suffix = next((end for letter, end in _LITERAL_SUFFIX.items() if kind == _BUILTIN[letter]), None)
        return number + suffix if suffix is not None else number if kind == "int" else f"({kind}){number}"

    # -- types ----------------------------------------------------------------------------
    def type(self) -> str:
        self.enter()
        text = self._type()
        self.depth -= 1
        return text

    def _type(self) -> str:
        c = self.peek()
        if c in _BUILTIN:
            self.i += 1
            return _BUILTIN[c]
        if c == "D" and self.peek(1) in _BUILTIN_D:
            self.i += 2
            return _BUILTIN_D[self.s[self.i - 1]]
        if self.eat("Dp"):
            return self.add(self.expansion())
        if self.eat("DF"):
            bits = self.number()
            self.need("_")
            return f"_Float{bits}"
        if c in "rVK":
            quals = []
            while self.peek() in ("r", "V", "K") and self.peek():
                quals.append({"r": "restrict", "V": "volatile", "K": "const"}[self.s[self.i]])
                self.i += 1
            inner, words = self.type(), " ".join(reversed(quals))
            if inner.endswith("]") and " [" in inner:  # const applies to an array's elements
                base, size = inner.rsplit(" [", 1)
                return self.add(f"{base} {words} [{size}")
            return self.add(f"{inner} {words}")
        if c in "PRO":
            self.i += 1
            mark = {"P": "*", "R": "&", "O": "&&"}[c]
            if self.peek() == "F" or self.s.startswith("DoF", self.i):
                ret, args = self.function_type()
                self.add(f"{ret} {args}")
                return self.add(f"{ret} ({mark}){args}")
            return self.add(_reference(self.type(), mark))
        if c == "F" or self.s.startswith("DoF", self.i):
            ret, args = self.function_type()
            return self.add(f"{ret} {args}")
        if self.eat("A"):
            size = str(self.number()) if self.peek().isdigit() else ""
            self.need("_")
            return self.add(f"{self.type()} [{size}]")
        if self.eat("M"):
            owner = self.type()
            return self.add(f"{self.type()} {owner}::*")
        if c == "T":
            text = self.add(self.template_param())
            if self.peek() == "I":
                text = self.add(text + _angle(self.template_args()))
            return text
        if c == "u":
            self.i += 1
            return self.add(self.source_name())
        if c == "S" and self.peek(1) != "t":
            text = self.substitution()
            if self.peek() == "I":
                text = self.add(text + _angle(self.template_args()))
            return text
        name, _template, _plain, _ = self.name()
        return self.add(name)

    def function_type(self) -> tuple[str, str]:
        noexcept = " noexcept" if self.eat("Do") else ""
        self.need("F")
        self.eat("Y")
        ret = self.type()
        args = self.params()
        self.need("E")
        return ret, args + noexcept
