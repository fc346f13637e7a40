// SPDX-License-Identifier: MIT
//
// TypeScript declarations of the twheel package (index.js). A Wheel's id
// type follows its `bigint` option: Wheel<number> by default (ids up to
// 2^53 - 1), Wheel<bigint> with { bigint: true } (any __u64). Times are
// BigInt ns on the wheel's clock.

import { EventEmitter } from 'node:events';

/** An id as the wheel takes it: a safe-integer Number or a BigInt. */
export type IdInput = number | bigint;

export interface WheelOptions {
  /** The tick (precision), 0.1 ms to 1 h; default 10 ms. Or tickNs. */
  tickMs?: number;
  tickNs?: bigint | number;
  /** The default timeout of every op that gives none (required, one of the two). */
  timeoutMs?: number;
  timeoutNs?: bigint | number;
  /** 'monotonic' (default) or 'boottime' (time in suspend counts). */
  clock?: 'monotonic' | 'boottime';
  /** Cap on live ids plus unread events; 0 (default): the module's. */
  cap?: number;
  /** Slots of the touch table; 0 (default): none. */
  touchSlots?: number;
  /** Hand ids back as BigInts and take any __u64 (default false: Numbers). */
  bigint?: boolean;
}

/** The timeout of one op: relative (ms or ns) or an absolute deadline. */
export interface TimeoutOptions {
  timeoutMs?: number;
  timeoutNs?: bigint | number;
  /** Absolute deadline, ns on the wheel's clock (see Wheel.now()). */
  deadlineNs?: bigint | number;
}

export interface AddOptions extends TimeoutOptions {
  /** Bind the id to this touch slot (null: unbind). */
  slot?: number | null;
}

export interface RefreshOptions extends AddOptions {
  /** Add the id when it is not live instead of failing with ENOENT. */
  addIfAbsent?: boolean;
}

export interface RefreshIdsOptions extends TimeoutOptions {
  addIfAbsent?: boolean;
}

export type BatchOp =
  | ({ op: 'add'; id: IdInput } & AddOptions)
  | ({ op: 'refresh'; id: IdInput } & RefreshOptions)
  | { op: 'cancel'; id: IdInput }
  | { op: 'query'; id: IdInput };

export interface BatchResult<Id> {
  op: BatchOp['op'];
  id: Id;
  /** null, or the error's code: 'ENOENT', 'EEXIST', 'ENOSPC', 'EINVAL', ... */
  code: string | null;
  /** 0 or a negative errno. */
  errno: number;
  deadlineNs: bigint;
  remainingNs: bigint;
}

export interface ExpiredEvent<Id> {
  id: Id;
  /** Its deadline, on the tick grid. */
  deadlineNs: bigint;
  /** When the wheel processed it; never before deadlineNs. */
  expiredNs: bigint;
}

export interface DumpEntry<Id> {
  id: Id;
  deadlineNs: bigint;
  slot: number | null;
}

/** The errors of system calls, as Node's own (fs, net). */
export interface TwheelError extends Error {
  code: string;
  errno: number;
  syscall: string;
  op: string;
  id?: IdInput;
  path?: string;
  /** batch(), refreshIds(): the operations applied before the error. */
  applied?: number;
}

export interface WheelEvents<Id> {
  expired: [events: ExpiredEvent<Id>[]];
  error: [err: TwheelError];
  close: [];
}

/**
 * A wheel, its ids Numbers (Wheel<number>, the default) or BigInts
 * (Wheel<bigint>, made with { bigint: true }): the type the option gives
 * at run time, as the constructor's overloads say.
 */
export interface Wheel<Id extends number | bigint = number> extends EventEmitter {
  readonly tickNs: bigint;
  readonly timeoutNs: bigint;
  readonly clock: 'monotonic' | 'boottime';
  readonly cap: number;
  readonly touchSlots: number;
  readonly bigint: boolean;
  readonly closed: boolean;
  /** The wheel's fd; -1 once closed. */
  readonly fd: number;
  /** The touch table over the mapping, or null without touchSlots. */
  readonly touchTable: BigUint64Array | null;

  /** Make id live; its deadline. Throws EEXIST if it is live. */
  add(id: IdInput, options?: AddOptions): bigint;
  /** Move a live id's deadline; its new deadline. Throws ENOENT if not live. */
  refresh(id: IdInput, options?: RefreshOptions): bigint;
  /** Remove a live id; the deadline it had. Throws ENOENT if not live. */
  cancel(id: IdInput): bigint;
  /** A live id's deadline and time left. Throws ENOENT if not live. */
  query(id: IdInput): { deadlineNs: bigint; remainingNs: bigint };
  /** Many ops in one system call, each with its own result. */
  batch(ops: BatchOp[]): BatchResult<Id>[];
  /** Refresh many ids to one timeout; the ids not refreshed. */
  refreshIds(ids: IdInput[] | BigUint64Array, options?: RefreshIdsOptions): Id[];
  /** The live ids, a chunk (default 1024) per system call. */
  dump(options?: { chunk?: number }): Generator<DumpEntry<Id>, void, undefined>;
  /** The events waiting now, at most max (default 1024), without blocking. */
  readEvents(max?: number): ExpiredEvent<Id>[];
  /** The wheel's clock now, in ns. */
  now(): bigint;
  /** Refresh the id bound to slot: the clock now stored in its slot. */
  touch(slot: number): void;
  /** Store ns (on the wheel's clock) into slot. */
  touchAt(slot: number, ns: bigint | number): void;

  ref(): this;
  unref(): this;
  hasRef(): boolean;
  /** Stop reading and close the fd; safe from a listener and twice. */
  close(): void;

  /** The expirations one at a time; iterators share them (each event to one). */
  events(): AsyncIterableIterator<ExpiredEvent<Id>>;
  [Symbol.asyncIterator](): AsyncIterableIterator<ExpiredEvent<Id>>;

  on<K extends keyof WheelEvents<Id>>(event: K, listener: (...args: WheelEvents<Id>[K]) => void): this;
  once<K extends keyof WheelEvents<Id>>(event: K, listener: (...args: WheelEvents<Id>[K]) => void): this;
  off<K extends keyof WheelEvents<Id>>(event: K, listener: (...args: WheelEvents<Id>[K]) => void): this;
  addListener<K extends keyof WheelEvents<Id>>(event: K, listener: (...args: WheelEvents<Id>[K]) => void): this;
  removeListener<K extends keyof WheelEvents<Id>>(event: K, listener: (...args: WheelEvents<Id>[K]) => void): this;
  prependListener<K extends keyof WheelEvents<Id>>(event: K, listener: (...args: WheelEvents<Id>[K]) => void): this;
}

export interface WheelConstructor {
  /** Ids are BigInts, any __u64. */
  new <Id extends bigint = bigint>(options: WheelOptions & { bigint: true }): Wheel<Id>;
  /** Ids are Numbers up to 2^53 - 1. */
  new <Id extends number = number>(options: WheelOptions & { bigint?: false }): Wheel<Id>;
  /** An option known only at run time: either. */
  new (options: WheelOptions): Wheel<number | bigint>;
  readonly prototype: Wheel<number | bigint>;
}

/** Opens /dev/twheel and sets the wheel up (its fd, its own wheel). */
export const Wheel: WheelConstructor;

/** The uapi's constants and layouts, from <linux/twheel.h>. */
export const constants: {
  readonly DEVICE: string;
  readonly TICK_MIN_NS: bigint;
  readonly TICK_MAX_NS: bigint;
  readonly MAX_TIMEOUT_TICKS: bigint;
  readonly MAX_TIMEOUT_NS: bigint;
  readonly TOUCH_MAX_SLOTS: number;
  readonly SLOT_NONE: number;
  readonly [name: string]: number | bigint | string;
};
