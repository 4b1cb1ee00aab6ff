#!/usr/bin/env python3
# Renders small templates that probe jinja2's semantics (scoping, undefined values, operators,
# filters, tests, methods, whitespace control, tojson) with jinja2 configured as Hugging Face's
# apply_chat_template configures it: ImmutableSandboxedEnvironment(trim_blocks, lstrip_blocks,
# loopcontrols), its tojson (json.dumps, insertion order, raw UTF-8), raise_exception, and
# strftime_now pinned to 2025-01-02 03:04:05. Writes tests/data/jinja/cases.json, which
# test_jinja compares our interpreter against: the output byte for byte, or that both fail.
# Needs `jinja2`.
import datetime
import json
import pathlib
import sys

try:
    from jinja2.exceptions import TemplateError
    from jinja2.ext import loopcontrols
    from jinja2.sandbox import ImmutableSandboxedEnvironment
except ImportError:
    sys.exit("make_jinja_golden.py needs jinja2: pip install jinja2")

OUT = pathlib.Path(__file__).resolve().parent.parent / "data" / "jinja" / "cases.json"
PINNED = datetime.datetime(2025, 1, 2, 3, 4, 5)


def environment():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def raise_exception(message):
        raise TemplateError(message)

    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: PINNED.strftime(fmt)
    return env


MSGS = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello!"}, {"role": "user", "content": "  Tell me\tmore \u00a0"}]
TOOL = {"type": "function", "function": {"name": "get_weather", "description": "Weather <now> & \u00e9t\u00e9",
                                         "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                                        "required": ["city"]}}}

# (name, template, variables)
CASES = [
    ("text", "plain text\n", {}),
    ("trailing_newline_kept_one", "a\n\n", {}),
    ("crlf", "a\r\nb\r\n{% if true %}\r\nc{% endif %}", {}),
    ("trim_lstrip", "A\n  {% if true %}\n  B\n  {% endif %}\n  {{ 'C' }}\n{# c #}\nD\n", {}),
    ("minus_control", "a  {%- if true -%}  b  {%- endif -%}  c {{- ' d ' -}} e", {}),
    ("plus_control", "a\n  {%+ if true +%}\nb{% endif %}", {}),
    ("comment_minus", "x  {#- note -#}  y", {}),
    ("raw", "{% raw %}{{ not run }}{% endraw %}", {}),
    ("loop_scope", "{% set x = 0 %}{% for i in range(3) %}{% set x = x + 1 %}{{ x }}{% endfor %}{{ x }}", {}),
    ("loop_iteration_scope", "{% for i in range(3) %}{% if i == 0 %}{% set y = 5 %}{% endif %}[{{ y }}]{% endfor %}", {}),
    ("namespace", "{% set ns = namespace(a=1, b='x') %}{% for i in [1, 2] %}{% set ns.a = ns.a + i %}{% endfor %}{{ ns.a }}{{ ns.b }}", {}),
    ("if_scope_leaks", "{% if true %}{% set z = 3 %}{% endif %}{{ z }}", {}),
    ("loop_vars", "{% for m in messages %}{{ loop.index }}{{ loop.index0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}{{ loop.revindex }};{% endfor %}", {"messages": MSGS}),
    ("loop_filter", "{% for k, v in d.items() if k != 'b' %}{{ k }}={{ v }}{{ '.' if loop.last else ',' }}{% endfor %}", {"d": {"a": 1, "b": 2, "c": 3}}),
    ("loop_else", "{% for a in [] %}x{% else %}empty{% endfor %}", {}),
    ("loop_controls", "{% for i in range(10) %}{% if i == 2 %}{% continue %}{% endif %}{% if i == 5 %}{% break %}{% endif %}{{ i }}{% endfor %}", {}),
    ("loop_prev_next", "{% for i in [1, 2, 3] %}{{ loop.previtem }}|{{ loop.nextitem }};{% endfor %}", {}),
    ("loop_over_dict_and_string", "{% for k in d %}{{ k }}{% endfor %}|{% for c in 'h\u00e9!' %}[{{ c }}]{% endfor %}", {"d": {"x": 1, "y": 2}}),
    ("macro", "{% macro m(a, b=2) %}{{ a }}{{ b }}{{ g }}{% endmacro %}{% set g = 'G' %}{{ m(1) }}{{ m(1, b=3) }}{{ m(a=4) }}", {}),
    ("macro_recursion", "{% macro down(n) %}{{ n }}{% if n > 0 %}{{ down(n - 1) }}{% endif %}{% endmacro %}{{ down(4) }}", {}),
    ("macro_local_set", "{% set v = 'outer' %}{% macro m() %}{% set v = 'inner' %}{{ v }}{% endmacro %}{{ m() }}{{ v }}", {}),
    ("set_block", "{% set x %}inner {{ 1 + 1 }}{% endset %}[{{ x }}]", {}),
    ("call_block", "{% macro box() %}[{{ caller() }}]{% endmacro %}{% call box() %}in{% endcall %}", {}),
    ("filter_block", "{% filter upper %}shout {{ 'it' }}{% endfilter %}", {}),
    ("print_values", "{{ none }}|{{ true }}|{{ 1.0 }}|{{ 1e20 }}|{{ 0.1 + 0.2 }}|{{ 1e-5 }}|{{ 10 / 4 }}|{{ [1, 'a', none, true] }}|{{ {'k': 'v\\n', 'q': \"it's\"} }}|{{ (1, 2) }}", {}),
    ("undefined_prints_empty", "[{{ nope }}][{{ d.nope }}][{{ l[5] }}][{{ 'abc'[10] }}]", {"d": {}, "l": [1]}),
    ("undefined_attr_of_undefined", "{{ d.nope.deeper }}", {"d": {}}),
    ("undefined_plus", "{{ nope + 'x' }}", {}),
    ("undefined_tests", "{{ nope is defined }}{{ nope is undefined }}{{ none is none }}{{ nope is none }}{{ d.k is defined }}", {"d": {"k": None}}),
    ("undefined_in_and_length", "{{ 'x' in nope }}{{ nope | length }}{{ nope | trim }}|{% for i in nope %}x{% endfor %}", {}),
    ("arithmetic", "{{ 7 // 2 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 7 % -3 }} {{ 7 / 2 }} {{ 2 ** 10 }} {{ 'ab' * 2 }} {{ 1 + 1.5 }} {{ true + 1 }} {{ 3 - 5 }}", {}),
    ("concat", "{{ 'a' ~ 1 ~ none ~ true ~ nope }}|{{ [1] + [2] }}", {}),
    ("string_plus_int_fails", "{{ 'a' + 1 }}", {}),
    ("compare", "{{ 1 < 2 < 3 }}{{ 3 > 2 > 2 }}{{ 'a' in 'cat' }}{{ 1 in [1] }}{{ 'k' in {'k': 1} }}{{ 1 == 1.0 }}{{ 1 == true }}{{ [1, {'a': 2}] == [1, {'a': 2}] }}{{ 'b' not in 'abc' }}{{ 2 >= 2 }}{{ 'a' < 'b' }}", {}),
    ("and_or_return_operands", "{{ 0 or 'x' }}|{{ 'y' and [] }}|{{ nope or 'fallback' }}|{{ l[5].role or 'safe' if false else 'short' }}", {"l": []}),
    ("short_circuit", "{{ true or l[5].role }}{{ false and l[5].role }}", {"l": []}),
    ("not_precedence", "{{ not 1 == 2 }}{{ not x is none }}{{ not l|length == 1 }}", {"x": 1, "l": [1]}),
    ("filter_precedence", "{{ '\\n' + x | tojson + '\\n' }}|{{ l|length - 1 }}|{{ -n|abs }}", {"x": {"a": 1}, "l": [1, 2, 3], "n": 4}),
    ("conditional", "{{ 'a' if true else 'b' }}{{ 'a' if false else 'b' }}[{{ 'x' if false }}]{{ 1 if 0 else 2 if 0 else 3 }}", {}),
    ("subscripts", "{{ l[0] }}{{ l[-1] }}{{ l[1:] }}{{ l[:-1] }}{{ l[::-1] }}{{ l[::2] }}{{ 'h\u00e9llo'[1:3] }}{{ 'abc'[-1] }}{{ d['k'] }}{{ d.k }}{{ l[i] }}{{ l[10:] }}", {"l": [1, 2, 3, 4], "d": {"k": "v"}, "i": 2}),
    ("dict_method_shadows_key", "{{ d['items'] }}|{% for k, v in d.items() %}{{ k }}{% endfor %}|{{ d.get('items') }}{{ d.get('none', 'dflt') }}{{ d.get('none') }}", {"d": {"items": "I", "b": 2}}),
    ("list_literals", "{{ ['a', 'b'] }}{{ [] }}{{ {'a': [1, {}]} }}{{ () }}{{ (1,) }}", {}),
    ("string_literals", "{{ 'it\\'s' }}{{ \"q\\\"t\" }}{{ 'tab\\there' }}{{ 'a' 'b' }}{{ '\\u00e9\\x41' }}{{ 'back\\\\slash' }}{{ 'keep\\d' }}", {}),
    ("tests", "{{ 'a' is string }}{{ 1 is string }}{{ d is mapping }}{{ 'a' is iterable }}{{ l is sequence }}{{ 1 is number }}{{ true is number }}{{ 1.5 is float }}{{ 1 is integer }}{{ true is boolean }}{{ false is false }}{{ 0 is false }}{{ true is true }}{{ 3 is odd }}{{ 4 is even }}{{ 6 is divisibleby 3 }}{{ 'a' is equalto 'a' }}{{ l is iterable }}{{ none is mapping }}", {"d": {}, "l": [1]}),
    ("tojson", "{{ d | tojson }}|{{ d | tojson(indent=2) }}|{{ 'x<y>&\\'\u00e9\"\\\\' | tojson }}|{{ d | tojson(ensure_ascii=true) }}|{{ [] | tojson }}{{ {} | tojson }}|{{ d | tojson(sort_keys=true) }}|{{ x | tojson(separators=(',', ':')) }}", {"d": {"b": 1, "a": [1, 2.5, None, True, "\u00e9\n\u2028"], "c": {}}, "x": [1, {"k": 1.0}]}),
    ("tojson_floats", "{{ [1.0, 0.1, 1e-07, 1e16, 1.5e16, 123456789.125, -0.0, 2.0e-5] | tojson }}", {}),
    ("tojson_tool", "{{ tools | tojson(indent=4) }}", {"tools": [TOOL]}),
    ("filters_text", "{{ '  a b  ' | trim }}|{{ 'x\u00a0\u3000' | trim }}|{{ 'ab' | upper }}{{ 'AB' | lower }}{{ 'hello world' | title }}{{ 'hELLO' | capitalize }}|{{ 'aXbXc' | replace('X', '-') }}|{{ 5 | string }}{{ d | string }}", {"d": {"temp": 20}}),
    ("filters_lists", "{{ l | length }}{{ l | first }}{{ l | last }}{{ l | join(', ') }}{{ l | reverse | list }}{{ l | unique | list }}{{ l | sort }}{{ l | min }}{{ l | max }}{{ l | sum }}{{ 'ab' | list }}", {"l": [3, 1, 2, 1]}),
    ("filters_select", "{{ msgs | selectattr('role', 'equalto', 'user') | list | length }}|{{ msgs | rejectattr('role', 'equalto', 'user') | map(attribute='role') | join(',') }}|{{ [1, 2, 3] | reject('equalto', 2) | list }}|{{ [0, 1, '', 'a'] | select | list }}|{{ ['a', 'b'] | map('upper') | join }}", {"msgs": MSGS}),
    ("filters_misc", "{{ nope | default('d') }}{{ '' | default('e', true) }}{{ '' | default('f') }}|{{ d | items | list }}|{{ d | dictsort }}|{{ '3' | int + 1 }}{{ 'x' | int }}{{ 2.7 | int }}{{ '1.5' | float }}|{{ 2.567 | round(2) }}|{{ 'a\nb\n\nc' | indent(2) }}|{{ -3 | abs }}", {"d": {"b": 2, "a": 1}}),
    ("methods", "{{ '  x  '.strip() }}|{{ 'xxhixx'.strip('x') }}|{{ '\\n\\nhi\\n'.lstrip() }}|{{ 'hi  '.rstrip() }}|{{ 'a,b,,c'.split(',') }}|{{ ' a  b '.split() }}|{{ 'a</think>b</think>  c'.split('</think>')[-1] }}|{{ 'a b c'.split(' ', 1) }}|{{ 'abc'.startswith('ab') }}{{ 'abc'.endswith(('x', 'c')) }}|{{ 'aaa'.replace('a', 'b', 2) }}|{{ 'Hi'.upper() }}{{ 'Hi'.lower() }}|{{ ', '.join(['x', 'y']) }}|{{ 'abcabc'.find('c') }}{{ 'abcabc'.count('bc') }}", {}),
    ("globals", "{{ strftime_now('%d %b %Y') }}|{{ strftime_now('%Y-%m-%d') }}|{{ range(3) | list }}{{ range(1, 7, 2) | list }}{{ range(3, 0, -1) | list }}|{{ dict(a=1) }}", {}),
    ("raise", "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}", {}),
    ("unknown_filter", "{{ 'x' | nosuchfilter }}", {}),
    ("unknown_tag", "{% frobnicate %}", {}),
    ("unclosed_if", "{% if true %}x", {}),
    ("unclosed_tag", "{{ 'x' ", {}),
    ("bad_expression", "{{ 1 + }}", {}),
    ("list_append_sandboxed", "{% set l = [] %}{{ l.append(1) }}", {}),
    ("unicode", "{{ '<\uff5cUser\uff5c>' + x + '\u3010\u2020\u3011' }}{{ x | length }}{{ x[::-1] }}", {"x": "h\u00e9\U0001F600"}),
    ("undefined_soft_str_filters", "[{{ nope | upper }}][{{ nope | replace('a', 'b') }}][{{ nope | title }}]", {}),
    ("undefined_indent", "{{ nope | indent }}", {}),
    ("sort_case_insensitive", "{{ ['b', 'B', 'a'] | sort }}{{ ['b', 'B', 'a'] | sort(case_sensitive=true) }}{{ ['b', 'A', 'a', 'B'] | unique | list }}{{ ['x', 'Y'] | max }}{{ l | sort(reverse=true, attribute='k') | map(attribute='n') | list }}", {"l": [{"k": 1, "n": "a"}, {"k": 2, "n": "b"}, {"k": 1, "n": "c"}]}),
    ("dict_literal_closing_braces", "{{ {'a': 1}}}|{{ {'a': {'b': 2}}}}", {}),
    ("numbers_misc", "{{ 3 | round }}|{{ 2.5 | round }}|{{ '12abc' | int }}|{{ ' 7 ' | int }}|{{ 1 in {'1': 0} }}|{{ '1' in {'1': 0} }}|{{ 2 ** 62 }}", {}),
    ("indent_rules", "[{{ 'a\n  \nb\n\nc' | indent(2) }}][{{ '\nx' | indent(2, true) }}][{{ 'a\n\nb' | indent(2, blank=true) }}][{{ 'a\n' | indent }}]", {}),
    ("chat_loop", "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] | trim + '<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}", {"messages": MSGS, "add_generation_prompt": True}),
]


def main():
    env = environment()
    out = []
    for name, source, variables in CASES:
        case = {"name": name, "template": source, "variables": variables}
        try:
            case["expected"] = env.from_string(source).render(**variables)
        except Exception as e:   # what fails in jinja2 must fail in ours too
            case["error"] = f"{type(e).__name__}: {e}"
        out.append(case)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {OUT} ({len(out)} cases, {sum('error' in c for c in out)} expected to fail)")


if __name__ == "__main__":
    main()
