"""The official Ollama client against `rhizome serve`: list, a chat, a streamed chat and
a two-turn conversation. Usage: ollama_chat.py BASE_URL API_KEY"""
import json
import sys

from ollama import Client

base, key = sys.argv[1], sys.argv[2]
client = Client(host=base, headers={"Authorization": "Bearer " + key})
Q1 = "Who shared the Nobel Prize in Physics with Aage Bohr?"
Q0 = "When did Niels Bohr receive the Nobel Prize in Physics?"
FOLLOW_UP = "And his son?"

names = [m.model for m in client.list().models]
assert "rhizome:latest" in names and "rhizome-hippo:latest" in names, names

whole = client.chat(model="rhizome", messages=[{"role": "user", "content": Q1}], stream=False)
answer = whole.message.content
assert whole.done, whole
assert "Mottelson" in answer and "\n\nSources:\n[1] copenhagen-physics" in answer, answer

parts = list(client.chat(model="rhizome-hippo:latest", messages=[{"role": "user", "content": Q1}], stream=True))
streamed = "".join(p.message.content or "" for p in parts)
assert parts[-1].done and not any(p.done for p in parts[:-1]), parts
assert "Mottelson" in streamed and "Sources:" in streamed, streamed

first = client.chat(model="rhizome-basic", messages=[{"role": "user", "content": Q0}], stream=False).message.content
assert "Niels Bohr" in first, first
history = [{"role": "user", "content": Q0}, {"role": "assistant", "content": first}, {"role": "user", "content": FOLLOW_UP}]
second = client.chat(model="rhizome-basic", messages=history, stream=False).message.content
# "his" is Niels Bohr (the question's person), so the answer is about his son Aage Bohr.
assert "His son Aage Bohr" in second and "Sources:" in second, second

print(json.dumps({"models": len(names), "answer": answer, "streamed_lines": len(parts), "follow_up": second}))
