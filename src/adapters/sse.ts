/**
 * Server-sent events, as a streaming chat completion sends them: the `data` of each event,
 * with its `event` type. Written here rather than taken from eventsource-parser because
 * Booth's install is held to 10 packages (README, measured in CI) and one more would break
 * it; because that library's current major needs Node 22.12 while Booth supports Node 20;
 * and because an adapter needs only the `data` and `event` fields (no `id`, `retry` or
 * reconnection), which the WHATWG rules below give in a few lines. What they cover: lines
 * ended by CRLF, LF or CR, a CR and its LF split across chunks, comments (`: keep-alive`),
 * a field without a colon, one space after the colon dropped, several `data` lines joined
 * by a line feed, an event with no `data` not dispatched. The byte order mark is the
 * TextDecoder's to drop.
 */

/** One dispatched event: its type (`message` unless the server named one) and its data. */
export interface ServerSentEvent {
  readonly event: string;
  readonly data: string;
}

export class EventStreamReader {
  /** Text received after the last complete line. */
  #rest = '';
  #data: string[] = [];
  #event = '';

  /** The events that `text`, the next piece of the stream, completes. */
  push(text: string): ServerSentEvent[] {
    const events: ServerSentEvent[] = [];
    const buffer = this.#rest + text;
    let start = 0;
    // The rest holds no line break but perhaps a last CR: scanning resumes there, so a line
    // that arrives in many pieces is scanned once, not once a piece.
    for (let index = Math.max(0, this.#rest.length - 1); index < buffer.length; index++) {
      const code = buffer.charCodeAt(index);
      if (code !== 10 && code !== 13) continue;
      // A CR last in the buffer may be the first half of a CRLF: wait for the next piece.
      if (code === 13 && index === buffer.length - 1) break;
      this.#line(buffer.slice(start, index), events);
      if (code === 13 && buffer.charCodeAt(index + 1) === 10) index++;
      start = index + 1;
    }
    this.#rest = buffer.slice(start);
    return events;
  }

  /**
   * The end of the stream. A last line ended by a lone CR is still a line; text after the
   * last line break is not (the WHATWG rules drop it). Unlike those rules, an event whose
   * lines are all complete is dispatched without the blank line that should follow it: a
   * server that ended its response cleanly meant what it sent.
   */
  end(): ServerSentEvent[] {
    const events: ServerSentEvent[] = [];
    if (this.#rest.endsWith('\r')) this.#line(this.#rest.slice(0, -1), events);
    this.#rest = '';
    this.#line('', events);
    return events;
  }

  #line(line: string, events: ServerSentEvent[]): void {
    if (line === '') {
      if (this.#data.length > 0) events.push({ event: this.#event || 'message', data: this.#data.join('\n') });
      this.#data = [];
      this.#event = '';
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.#data.push(value);
    else if (field === 'event') this.#event = value;
  }
}
