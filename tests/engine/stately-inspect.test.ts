import { createWebSocketInspector } from '@statelyai/inspect';
import { type AddressInfo, WebSocketServer } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { check } from '../../src/index.js';
import { envelope, scripted } from '../fixtures/helpers.js';

/** The recipe for @statelyai/inspect in docs/seeing-runs.md, run against a local WebSocket server on 127.0.0.1. */
describe('@statelyai/inspect', () => {
  let server: WebSocketServer;
  const received: Array<{ type: string; event?: { type: string } }> = [];

  beforeAll(async () => {
    server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    server.on('connection', (socket) => socket.on('message', (data) => received.push(JSON.parse(String(data)))));
    await new Promise((resolve) => server.once('listening', resolve));
  });

  afterAll(async () => {
    for (const client of server.clients) client.terminate();
    await new Promise((resolve) => server.close(resolve));
  });

  it('its WebSocket inspector receives a check’s events and snapshots', async () => {
    const { port } = server.address() as AddressInfo;
    const inspector = createWebSocketInspector({ url: `ws://127.0.0.1:${port}` });
    const result = check(scripted(['junk', envelope('Paris', 0.9)]).sync, 'q', { inspect: inspector.inspect });
    expect(result.status).toBe('REPAIRED');
    await expect.poll(() => received.filter((m) => m.type === '@xstate.event').length, { timeout: 5_000 }).toBeGreaterThanOrEqual(3);
    inspector.stop();
    const events = received.filter((m) => m.type === '@xstate.event').map((m) => m.event?.type);
    expect(events).toEqual(expect.arrayContaining(['xstate.init', 'model.replied']));
    expect(received.some((m) => m.type === '@xstate.snapshot')).toBe(true);
  });
});
