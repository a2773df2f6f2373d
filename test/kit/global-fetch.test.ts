/**
 * Importing the executor kit must not change the host's own `fetch`. The `undici` package, when
 * it loads first, installs its Agent as the process's global dispatcher, and Node 20's built-in
 * fetch (an older undici) then refuses requests that carry a Content-Length header. Each case
 * runs in a fresh Node process, so nothing else has loaded either undici first.
 */
import { execFileSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

function fetchAfterImporting(specifier: string): { status: number | string; slot: string } {
  const script = `
    import { createServer } from 'node:http';
    import { once } from 'node:events';
    await import(${JSON.stringify(specifier)});
    const { Agent } = await import('undici');
    const held = globalThis[Symbol.for('undici.globalDispatcher.1')];
    const slot = held === undefined ? 'empty' : held instanceof Agent ? 'undici package' : 'node';
    const server = createServer((request, response) => response.end('{}')).listen(0, '127.0.0.1');
    await once(server, 'listening');
    let status;
    try {
      const response = await fetch('http://127.0.0.1:' + server.address().port + '/', {
        method: 'POST', body: 'ab', headers: { 'Content-Length': '2' },
      });
      status = response.status;
    } catch (error) {
      status = String(error.cause?.message ?? error.message);
    }
    server.close();
    console.log(JSON.stringify({ status, slot }));`;
  const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: root,
    encoding: 'utf8',
  });
  return JSON.parse(output) as { status: number | string; slot: string };
}

describe("the host's global fetch", () => {
  it("still works after importing sideguard/executor-kit: the slot holds Node's own dispatcher", () => {
    const kit = join(root, 'dist', 'executor-kit', 'index.js');
    expect(fetchAfterImporting(kit)).toEqual({ status: 200, slot: 'node' });
  });

  it("is taken over by importing undici directly, and on Node 20 breaks (why the kit loads Node's first)", () => {
    const result = fetchAfterImporting('undici');
    expect(result.slot).toBe('undici package');
    if (process.versions.node.startsWith('20.')) {
      expect(result.status).toBe('invalid content-length header');
    }
  });
});
