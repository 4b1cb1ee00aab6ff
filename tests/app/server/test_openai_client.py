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

print(f"{passed} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
