"""The official `openai` Python client against workbench-cli serve: chat and completions,
streaming and not, n > 1, stop strings, usage, logprobs, and the client's own error types.
usage: test_openai_client.py BASE_URL API_KEY"""
import sys

import openai

base_url, key = sys.argv[1], sys.argv[2]
client = openai.OpenAI(base_url=base_url, api_key=key, max_retries=0, timeout=120)
failures = []
passed = 0


def check(name, condition, detail=""):
    global passed
    if condition:
        passed += 1
        print(f"ok    {name}")
    else:
        failures.append(name)
        print(f"FAIL  {name} {detail}")


models = client.models.list()
model = models.data[0].id
check("models.list names the loaded model", model.startswith("SmolLM2"), model)

messages = [{"role": "user", "content": "What is the capital of France?"}]
whole = client.chat.completions.create(model=model, messages=messages, max_tokens=20, temperature=0)
text = whole.choices[0].message.content
check("chat: a reply", isinstance(text, str) and len(text) > 0, repr(text))
check("chat: usage adds up", whole.usage.total_tokens == whole.usage.prompt_tokens + whole.usage.completion_tokens > 0)
check("chat: finish_reason", whole.choices[0].finish_reason in ("stop", "length"))

stream = client.chat.completions.create(model=model, messages=messages, max_tokens=20, temperature=0, stream=True,
                                        stream_options={"include_usage": True})
parts, usage, finish = [], None, None
for chunk in stream:
    if chunk.usage is not None:
        usage = chunk.usage
    for choice in chunk.choices:
        if choice.delta.content:
            parts.append(choice.delta.content)
        if choice.finish_reason:
            finish = choice.finish_reason
check("chat stream: equals the whole reply", "".join(parts) == text, repr("".join(parts)))
check("chat stream: include_usage gives usage", usage is not None and usage.completion_tokens == whole.usage.completion_tokens)
check("chat stream: a finish_reason", finish == whole.choices[0].finish_reason)

comp = client.completions.create(model=model, prompt="The first three letters of the alphabet are", max_tokens=16,
                                 temperature=0)
check("completions: text", len(comp.choices[0].text) > 0)
streamed = "".join(c.choices[0].text for c in client.completions.create(
    model=model, prompt="The first three letters of the alphabet are", max_tokens=16, temperature=0, stream=True) if c.choices)
check("completions stream: equals the whole text", streamed == comp.choices[0].text, repr(streamed))

many = client.chat.completions.create(model=model, messages=[{"role": "user", "content": "Name an animal."}], max_tokens=8,
                                      n=3, temperature=1.0, seed=7)
check("n=3: three choices, indexed", sorted(c.index for c in many.choices) == [0, 1, 2])
again = client.chat.completions.create(model=model, messages=[{"role": "user", "content": "Name an animal."}], max_tokens=8,
                                       n=3, temperature=1.0, seed=7)
check("seed: the same choices again", [c.message.content for c in many.choices] == [c.message.content for c in again.choices])

full = comp.choices[0].text
stop = full[len(full) // 2:len(full) // 2 + 2]
cut = client.completions.create(model=model, prompt="The first three letters of the alphabet are", max_tokens=16,
                                temperature=0, stop=[stop])
check("stop: text cut before the stop string", cut.choices[0].text == full[:full.find(stop)], repr(cut.choices[0].text))
check("stop: finish_reason stop", cut.choices[0].finish_reason == "stop")

lp = client.chat.completions.create(model=model, messages=messages, max_tokens=5, temperature=0, logprobs=True, top_logprobs=2)
entries = lp.choices[0].logprobs.content
check("logprobs: one entry per token, two alternatives each",
      len(entries) == lp.usage.completion_tokens and all(len(e.top_logprobs) == 2 and e.logprob <= 0 for e in entries))

try:
    client.chat.completions.create(model=model, messages=messages, max_tokens=5, n=99)
    check("n=99: refused", False)
except openai.BadRequestError as e:
    check("n=99: BadRequestError naming n", e.status_code == 400 and "'n'" in str(e), str(e))
try:
    client.chat.completions.create(model="no-such-model", messages=messages, max_tokens=5)
    check("unknown model: refused", False)
except openai.NotFoundError as e:
    check("unknown model: NotFoundError", e.status_code == 404)
try:
    openai.OpenAI(base_url=base_url, api_key="wrong", max_retries=0).models.list()
    check("wrong key: refused", False)
except openai.AuthenticationError as e:
    check("wrong key: AuthenticationError", e.status_code == 401)


# Structured output: every reply to a json_schema request parses and validates against its schema
# (checked by the jsonschema package, not by us), over several schemas and seeds, sampled at
# temperature 1 so the grammar has refusals to make.
SCHEMAS = {
    "person": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 20},
                                                 "age": {"type": "integer", "minimum": 0, "maximum": 120}},
               "required": ["name", "age"]},
    "verdict": {"type": "object", "properties": {"answer": {"enum": ["yes", "no", "maybe"]}, "confidence": {"type": "number"}},
                "required": ["answer", "confidence"], "additionalProperties": False},
    "cities": {"type": "array", "minItems": 1, "maxItems": 3,
               "items": {"type": "object", "properties": {"city": {"type": "string", "maxLength": 15},
                                                          "population": {"type": "integer", "minimum": 0}},
                         "required": ["city", "population"]}},
    "segment": {"$defs": {"point": {"type": "object", "properties": {"x": {"type": "integer", "minimum": -5, "maximum": 5},
                                                                     "y": {"anyOf": [{"type": "integer", "maximum": 99}, {"type": "null"}]}},
                                    "required": ["x", "y"]}},
                "type": "object", "properties": {"from": {"$ref": "#/$defs/point"}, "to": {"$ref": "#/$defs/point"}},
                "required": ["from", "to"]},
    "code": {"type": "object", "properties": {"code": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{2}$"}, "ok": {"type": "boolean"}},
             "required": ["code", "ok"]},
    "tags": {"type": "object", "properties": {"v": {"type": ["integer", "null"]},
                                               "tags": {"type": "array", "items": {"type": "string", "maxLength": 8}, "maxItems": 4}},
             "required": ["v", "tags"]},
    "flags": {"type": "object", "properties": {"version": {"const": 2}, "flags": {"type": "array", "items": {"type": "boolean"}, "maxItems": 5}},
              "required": ["version", "flags"]},
}
import json
import jsonschema

valid = 0
for name, schema in SCHEMAS.items():
    for seed in (1, 2, 3):
        reply = client.chat.completions.create(
            model=model, messages=[{"role": "user", "content": f"Reply with JSON for: {name}."}], max_tokens=300,
            temperature=1.0, seed=seed, response_format={"type": "json_schema", "json_schema": {"name": name, "schema": schema}})
        content = reply.choices[0].message.content
        try:
            jsonschema.validate(json.loads(content), schema)
            ok = reply.choices[0].finish_reason == "stop"
        except (ValueError, jsonschema.ValidationError) as e:
            ok = False
            content += f"  ({e})"
        check(f"json_schema {name} seed {seed}: parses and validates", ok, repr(content))
        valid += ok

streamed = "".join(c.choices[0].delta.content or "" for c in client.chat.completions.create(
    model=model, messages=[{"role": "user", "content": "A person, as JSON."}], max_tokens=300, temperature=0, stream=True,
    response_format={"type": "json_schema", "json_schema": {"name": "person", "schema": SCHEMAS["person"]}}) if c.choices)
try:
    jsonschema.validate(json.loads(streamed), SCHEMAS["person"])
    check("json_schema streamed: the deltas join into valid JSON", True)
except (ValueError, jsonschema.ValidationError) as e:
    check("json_schema streamed: the deltas join into valid JSON", False, repr(streamed))

obj = client.chat.completions.create(model=model, messages=[{"role": "user", "content": "Describe a cat as JSON."}], max_tokens=200,
                                     temperature=0, response_format={"type": "json_object"})
try:
    check("json_object: an object", isinstance(json.loads(obj.choices[0].message.content), dict) or obj.choices[0].finish_reason == "length",
          repr(obj.choices[0].message.content))
except ValueError:
    check("json_object: parses", obj.choices[0].finish_reason == "length", repr(obj.choices[0].message.content))

try:
    client.chat.completions.create(model=model, messages=messages, max_tokens=5, response_format={
        "type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "string", "format": "email"}}})
    check("json_schema outside the subset: refused", False)
except openai.BadRequestError as e:
    check("json_schema outside the subset: 400 naming the keyword", e.status_code == 400 and "'format'" in str(e), str(e))


# Tools: the default model's template has no tool form, so the tools are described in the Hermes
# form; a required or named call is held to the tools' schemas by the grammar and comes back as
# tool_calls (whole and streamed), whose arguments validate against the tool's parameters.
TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "The weather in a city now",
                                           "parameters": {"type": "object", "properties": {"city": {"type": "string", "maxLength": 30},
                                                                                          "unit": {"enum": ["c", "f"]}},
                                                          "required": ["city", "unit"]}}},
         {"type": "function", "function": {"name": "add", "description": "Add two integers",
                                           "parameters": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                                                          "required": ["a", "b"]}}}]
PARAMS = {t["function"]["name"]: t["function"]["parameters"] for t in TOOLS}
ask = [{"role": "user", "content": "What is the weather in Paris?"}]


def calls_valid(calls):
    try:
        for call in calls:
            jsonschema.validate(json.loads(call.function.arguments), PARAMS[call.function.name])
        return len(calls) > 0
    except (KeyError, ValueError, jsonschema.ValidationError):
        return False


forced = client.chat.completions.create(model=model, messages=ask, tools=TOOLS, tool_choice="required", temperature=0, max_tokens=200,
                                        parallel_tool_calls=False)
message = forced.choices[0].message
check("tools required: a call whose arguments validate", calls_valid(message.tool_calls or []), repr(message))
check("tools required: finish_reason tool_calls", forced.choices[0].finish_reason == "tool_calls", forced.choices[0].finish_reason)
check("tools required: ids are call_…", all(c.id.startswith("call_") and c.type == "function" for c in message.tool_calls or []))
two = client.chat.completions.create(model=model, messages=ask, tools=TOOLS, tool_choice="required", temperature=1.0, seed=5,
                                     max_tokens=200, n=2, parallel_tool_calls=False)
ids = [c.id for choice in two.choices for c in choice.message.tool_calls or []]
check("tools n=2: every call valid, ids unique across choices",
      len(ids) == 2 and len(set(ids)) == 2 and all(calls_valid(ch.message.tool_calls or []) for ch in two.choices), repr(ids))
named = client.chat.completions.create(model=model, messages=ask, tools=TOOLS, tool_choice={"type": "function", "function": {"name": "add"}},
                                       temperature=0.8, seed=3, max_tokens=200)
check("tools named: only that function, valid arguments",
      calls_valid(named.choices[0].message.tool_calls or []) and all(c.function.name == "add" for c in named.choices[0].message.tool_calls),
      repr(named.choices[0].message))
deltas, finish = {}, None
for chunk in client.chat.completions.create(model=model, messages=ask, tools=TOOLS, tool_choice="required", temperature=0, max_tokens=200,
                                            parallel_tool_calls=False, stream=True):
    for choice in chunk.choices:
        for d in choice.delta.tool_calls or []:
            entry = deltas.setdefault(d.index, {"id": "", "name": "", "arguments": ""})
            entry["id"] += d.id or ""
            entry["name"] += d.function.name or ""
            entry["arguments"] += d.function.arguments or ""
        finish = choice.finish_reason or finish
joined = [(e["name"], e["arguments"]) for _, e in sorted(deltas.items())]
check("tools streamed: the deltas join into the whole answer's calls",
      joined == [(c.function.name, c.function.arguments) for c in message.tool_calls or []] and finish == "tool_calls", repr(joined))
# The call and its result sent back: the model answers from it (a 200 with text, the result rendered).
follow = client.chat.completions.create(model=model, temperature=0, max_tokens=30, tools=TOOLS, messages=ask + [
    {"role": "assistant", "content": None, "tool_calls": [c.model_dump() for c in message.tool_calls or []]},
    {"role": "tool", "tool_call_id": (message.tool_calls or [None])[0].id if message.tool_calls else "x", "content": "18 C and sunny"}])
check("tools: a tool result is accepted and answered", isinstance(follow.choices[0].message.content, str), repr(follow.choices[0].message))
try:
    client.chat.completions.create(model=model, messages=ask, tools=TOOLS, tool_choice={"type": "function", "function": {"name": "nope"}}, max_tokens=5)
    check("tool_choice naming an unknown function: refused", False)
except openai.BadRequestError as e:
    check("tool_choice naming an unknown function: 400", e.status_code == 400 and "nope" in str(e), str(e))

# Reasoning: a reply that opens with <think> (forced here by a grammar, as the default model does not
# think) is split into reasoning_content and content, whole and streamed alike.
THINK = 'root ::= "<think>" [a-z ]{3,30} "</think>" [A-Za-z ]{3,30}'
whole = client.chat.completions.create(model=model, messages=ask, temperature=0, max_tokens=80, extra_body={"grammar": THINK})
reasoning = getattr(whole.choices[0].message, "reasoning_content", None) or whole.choices[0].message.model_extra.get("reasoning_content")
check("reasoning: thinking apart from the answer",
      isinstance(reasoning, str) and len(reasoning) >= 3 and "<think>" not in whole.choices[0].message.content and len(whole.choices[0].message.content) >= 3,
      repr(whole.choices[0].message))
parts_r, parts_c = [], []
for chunk in client.chat.completions.create(model=model, messages=ask, temperature=0, max_tokens=80, extra_body={"grammar": THINK}, stream=True):
    for choice in chunk.choices:
        extra = choice.delta.model_extra or {}
        parts_r.append(extra.get("reasoning_content") or "")
        parts_c.append(choice.delta.content or "")
check("reasoning streamed: reasoning_content deltas then content deltas, as the whole",
      "".join(parts_r) == reasoning and "".join(parts_c) == whole.choices[0].message.content, repr(("".join(parts_r), "".join(parts_c))))

print(f"{passed} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
