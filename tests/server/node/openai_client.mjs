// Baton's server called by the official openai client library for Node, as a user's
// script would: baton-cli serve on a free port with an API key, /v1/models, then
// /v1/completions without and with streaming, the same seed giving the same text both
// ways, stop strings, chat completions streamed and not, and a wrong key refused.
//
//   node openai_client.mjs BATON_CLI MODEL_DIR
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

let OpenAI;
try {
  ({ default: OpenAI } = await import("openai"));
} catch (e) {
  console.error("FAIL: the openai package is not installed in tests/server/node: run " +
                "packaging/install-deps.sh (" + e.message + ")");
  process.exit(1);
}

const [cli, model] = process.argv.slice(2);
const key = "test-key-" + process.pid;
const server = spawn(cli, ["serve", "--model", model, "--port", "0", "--api-key", key],
                     { stdio: ["ignore", "pipe", "inherit"] });
const failed = (e) => { console.error("FAIL:", e); server.kill("SIGTERM"); process.exit(1); };
const url = await new Promise((resolve, reject) => {
  const lines = createInterface({ input: server.stdout });
  lines.on("line", (l) => { const m = l.match(/ at (http:\/\/\S+)$/); if (m) resolve(m[1]); });
  server.on("exit", (code) => reject(new Error("baton-cli serve exited with " + code)));
  setTimeout(() => reject(new Error("no server address after 60 s")), 60000).unref();
}).catch(failed);

try {
  const client = new OpenAI({ baseURL: url + "/v1", apiKey: key, maxRetries: 0 });
  const models = await client.models.list();
  assert.equal(models.data.length, 1);
  const name = models.data[0].id;

  const prompt = "It is a truth universally acknowledged, that a single man";
  const plain = await client.completions.create(
    { model: name, prompt, max_tokens: 24, seed: 7, temperature: 0.8 });
  assert.equal(plain.object, "text_completion");
  assert.equal(plain.choices.length, 1);
  assert.ok(["length", "stop"].includes(plain.choices[0].finish_reason));
  assert.ok(plain.choices[0].text.length > 0);
  assert.ok(plain.usage.completion_tokens > 0 && plain.usage.completion_tokens <= 24);
  assert.equal(plain.usage.total_tokens, plain.usage.prompt_tokens + plain.usage.completion_tokens);

  const stream = await client.completions.create(
    { model: name, prompt, max_tokens: 24, seed: 7, temperature: 0.8, stream: true });
  let streamed = "", finish = null, chunks = 0;
  for await (const chunk of stream) {
    chunks += 1;
    assert.equal(chunk.object, "text_completion");
    streamed += chunk.choices[0].text;
    if (chunk.choices[0].finish_reason) finish = chunk.choices[0].finish_reason;
  }
  assert.ok(chunks > 2, "streamed in pieces");
  assert.equal(streamed, plain.choices[0].text, "same seed, same text, streamed or not");
  assert.equal(finish, plain.choices[0].finish_reason);

  // The second request of the same prompt reads it from a saved state.
  assert.ok(plain.usage.prompt_tokens > 0);
  const again = await client.completions.create(
    { model: name, prompt, max_tokens: 4, seed: 1, echo: true, n: 2 });
  assert.equal(again.choices.length, 2);
  for (const c of again.choices) assert.ok(c.text.startsWith(prompt));
  assert.equal(again.usage.prompt_tokens_details.cached_tokens, 2 * again.usage.prompt_tokens);

  // A stop string the greedy text contains ends it just before.
  const greedy = await client.completions.create(
    { model: name, prompt, max_tokens: 30, temperature: 0 });
  const words = greedy.choices[0].text.trim().split(/\s+/);
  if (words.length >= 3) {
    const stop = " " + words[2];
    const cut = greedy.choices[0].text.indexOf(stop);
    const stopped = await client.completions.create(
      { model: name, prompt, max_tokens: 30, temperature: 0, stop: [stop] });
    assert.equal(stopped.choices[0].text, greedy.choices[0].text.slice(0, cut));
    assert.equal(stopped.choices[0].finish_reason, "stop");
  }

  // Chat completions: a script the model continues as the assistant, streamed or not.
  const messages = [{ role: "system", content: "A story of the sea." },
                    { role: "user", content: "Who was the captain?" }];
  const chat = await client.chat.completions.create(
    { model: name, messages, max_tokens: 16, temperature: 0 });
  assert.equal(chat.object, "chat.completion");
  assert.equal(chat.choices[0].message.role, "assistant");
  assert.ok(!chat.choices[0].message.content.includes("\nUser:"));
  assert.ok(["length", "stop"].includes(chat.choices[0].finish_reason));
  const chatStream = await client.chat.completions.create(
    { model: name, messages, max_tokens: 16, temperature: 0, stream: true });
  let chatText = "", role = null;
  for await (const chunk of chatStream) {
    assert.equal(chunk.object, "chat.completion.chunk");
    role = role ?? chunk.choices[0].delta.role;
    chatText += chunk.choices[0].delta.content ?? "";
  }
  assert.equal(role, "assistant");
  assert.equal(chatText, chat.choices[0].message.content, "streamed chat, the same reply");

  // stream_options.include_usage: the last chunk has no choices and the usage.
  const counted = await client.chat.completions.create(
    { model: name, messages, max_tokens: 16, temperature: 0, stream: true,
      stream_options: { include_usage: true } });
  let usage = null, countedText = "";
  for await (const chunk of counted) {
    if (chunk.choices.length === 0) usage = chunk.usage;
    else countedText += chunk.choices[0].delta.content ?? "";
  }
  assert.equal(countedText, chat.choices[0].message.content);
  assert.ok(usage, "a usage chunk");
  assert.equal(usage.completion_tokens, chat.usage.completion_tokens);
  assert.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);

  const wrong = new OpenAI({ baseURL: url + "/v1", apiKey: "wrong", maxRetries: 0 });
  await assert.rejects(wrong.completions.create({ model: name, prompt, max_tokens: 2 }),
                       (e) => e.status === 401);
  await assert.rejects(client.completions.create({ model: name, prompt, max_tokens: -1 }),
                       (e) => e.status === 400);
  console.log("PASS: openai " + (await import("openai/version")).VERSION + " against " + url);
  server.kill("SIGTERM");
} catch (e) {
  failed(e);
}
