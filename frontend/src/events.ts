// A typed fan-out of the guard's events: the transport delivers each event
// once, views subscribe to the names they care about and unsubscribe when
// they unmount.

import type { EventName } from "./transport";
import type { GuardEvents } from "./model/types";

type Listener<K extends EventName> = (data: GuardEvents[K]) => void;

export class EventBus {
  private listeners = new Map<EventName, Set<(data: never) => void>>();
  private connectionListeners = new Set<(up: boolean) => void>();

  on<K extends EventName>(name: K, fn: Listener<K>): () => void {
    let set = this.listeners.get(name);
    if (!set) this.listeners.set(name, (set = new Set()));
    set.add(fn as (data: never) => void);
    return () => set.delete(fn as (data: never) => void);
  }

  /** Called with true on every (re)connection: a chance to refetch what was missed. */
  onConnection(fn: (up: boolean) => void): () => void {
    this.connectionListeners.add(fn);
    return () => this.connectionListeners.delete(fn);
  }

  dispatch(name: EventName, data: unknown): void {
    if (data === null || typeof data !== "object") return; // every event carries an object
    for (const fn of this.listeners.get(name) ?? []) {
      try {
        (fn as (d: unknown) => void)(data);
      } catch (e) {
        console.error(`tollgate: ${name} handler failed`, e);
      }
    }
  }

  connection(up: boolean): void {
    for (const fn of this.connectionListeners) fn(up);
  }
}
