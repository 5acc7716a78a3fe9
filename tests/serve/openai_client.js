// Driven by openai_client.sh: the official openai client against `rlx serve`.
const assert = require('node:assert/strict');
const fs = require('node:fs');
const OpenAI = require('openai');

const baseURL = process.env.RLX_BASE_URL;
const client = new OpenAI({ apiKey: 'sk-rlx-client', baseURL, maxRetries: 0 });

async function chatStreamed(messages, max_tokens) {
  const stream = await client.chat.completions.create({ model: 'tiny', messages, max_tokens, temperature: 0, stream: true });
  let text = '', finish = null, chunks = 0;
  for await (const chunk of stream) {
    chunks++;
    assert.equal(chunk.object, 'chat.completion.chunk');
    const c = chunk.choices[0];
    if (c.delta.content) text += c.delta.content;
    if (c.finish_reason) finish = c.finish_reason;
  }
  return { text, finish, chunks };
}

async function completionStreamed(prompt, max_tokens) {
  const stream = await client.completions.create({ model: 'tiny', prompt, max_tokens, temperature: 0, stream: true });
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0].text;
  return text;
}

async function main() {
  const models = await client.models.list();
  assert.deepEqual(models.data.map((m) => m.id).sort(), ['st', 'tiny']);

  // a streamed chat completion is the same text as the whole answer at once
  const messages = [{ role: 'user', content: 'Say something.' }];
  const whole = await client.chat.completions.create({ model: 'tiny', messages, max_tokens: 12, temperature: 0 });
  const streamed = await chatStreamed(messages, 12);
  assert.ok(streamed.chunks >= 2, `expected several chunks, got ${streamed.chunks}`);
  assert.equal(streamed.text, whole.choices[0].message.content);
  assert.equal(streamed.finish, whole.choices[0].finish_reason);
  assert.ok(whole.choices[0].message.content.length > 0);
  console.log(`chat: ${streamed.chunks} chunks, ${JSON.stringify(streamed.text)} (${streamed.finish})`);

  // a completion, with usage
  const done = await client.completions.create({ model: 'tiny', prompt: 'Once upon a time', max_tokens: 8, temperature: 0 });
  assert.equal(done.usage.completion_tokens, 8);
  assert.equal(done.choices[0].finish_reason, 'length');
  console.log(`completion: ${JSON.stringify(done.choices[0].text)}`);

  // embeddings equal to `rlx embed`'s
  const emb = await client.embeddings.create({ model: 'st', input: "the client's sentence" });
  const want = JSON.parse(fs.readFileSync(process.env.RLX_EMBED_JSON, 'utf8')).embeddings[0];
  const got = emb.data[0].embedding;  // the client asks for base64 and decodes it
  assert.equal(got.length, want.length);
  for (let i = 0; i < want.length; i++) assert.ok(Math.abs(got[i] - want[i]) < 1e-5, `embedding[${i}]: ${got[i]} vs ${want[i]}`);
  console.log(`embeddings: ${got.length} dims equal to rlx embed's`);

  // concurrent streams (more than the server's slots): each the text its request gives alone
  const prompts = Array.from({ length: 6 }, (_, i) => `client stream ${i}: ` + 'x'.repeat(i));
  const alone = [];
  for (const p of prompts) alone.push((await client.completions.create({ model: 'tiny', prompt: p, max_tokens: 10, temperature: 0 })).choices[0].text);
  const together = await Promise.all(prompts.map((p) => completionStreamed(p, 10)));
  assert.deepEqual(together, alone);
  console.log(`concurrent: ${prompts.length} streams equal to their requests alone`);

  // the errors the client raises
  await assert.rejects(new OpenAI({ apiKey: 'wrong', baseURL, maxRetries: 0 }).models.list(), (e) => e instanceof OpenAI.AuthenticationError);
  await assert.rejects(client.completions.create({ model: 'nope', prompt: 'x' }), (e) => e instanceof OpenAI.NotFoundError);
  await assert.rejects(client.completions.create({ model: 'tiny', prompt: 'x', max_tokens: 100000 }), (e) => e instanceof OpenAI.BadRequestError);
  console.log('errors: 401, 404 and 400 as the client expects');
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
