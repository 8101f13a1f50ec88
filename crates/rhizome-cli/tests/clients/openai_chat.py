"""The official OpenAI client against `rhizome serve`: models, a completion, a streamed
completion and a two-turn conversation. Usage: openai_chat.py BASE_URL API_KEY"""
import json
import sys

from openai import OpenAI

base, key = sys.argv[1], sys.argv[2]
client = OpenAI(base_url=base + "/v1", api_key=key)
Q1 = "Who shared the Nobel Prize in Physics with Aage Bohr?"
Q0 = "When did Niels Bohr receive the Nobel Prize in Physics?"
FOLLOW_UP = "And his son?"

models = [m.id for m in client.models.list()]
assert "rhizome" in models and "rhizome-hippo" in models, models

whole = client.chat.completions.create(model="rhizome", messages=[{"role": "user", "content": Q1}])
answer = whole.choices[0].message.content
assert whole.choices[0].finish_reason == "stop", whole
assert "Mottelson" in answer and "\n\nSources:\n[1] copenhagen-physics" in answer, answer

pieces = []
for chunk in client.chat.completions.create(model="rhizome-hippo", messages=[{"role": "user", "content": Q1}], stream=True):
    if chunk.choices and chunk.choices[0].delta.content:
        pieces.append(chunk.choices[0].delta.content)
streamed = "".join(pieces)
assert len(pieces) >= 2, pieces
assert "Mottelson" in streamed and "Sources:" in streamed, streamed

first = client.chat.completions.create(model="rhizome-basic", messages=[{"role": "user", "content": Q0}]).choices[0].message.content
assert "Niels Bohr" in first, first
history = [{"role": "user", "content": Q0}, {"role": "assistant", "content": first}, {"role": "user", "content": FOLLOW_UP}]
second = client.chat.completions.create(model="rhizome-basic", messages=history).choices[0].message.content
# "his" is Niels Bohr (the question's person), so the answer is about his son Aage Bohr.
assert "His son Aage Bohr" in second and "Sources:" in second, second

print(json.dumps({"models": len(models), "answer": answer, "streamed_pieces": len(pieces), "follow_up": second}))
