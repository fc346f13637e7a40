// SPDX-License-Identifier: MIT
//
// A typed use of every part of the API, checked by `tsc --noEmit` (make
// tsc): it is compiled, not run. Both forms of Wheel are made as a user
// writes them, with no type argument: the option alone gives the id type.
// expect-errors.ts holds what the declarations must refuse.
import { Wheel, ExpiredEvent, BatchResult, TwheelError, constants } from 'twheel';

const w = new Wheel({ tickMs: 10, timeoutMs: 30000, touchSlots: 16 });
const deadline: bigint = w.add(1, { timeoutMs: 500, slot: 3 });
w.refresh(1, { addIfAbsent: true, deadlineNs: deadline + 1000000n });
const { remainingNs }: { deadlineNs: bigint; remainingNs: bigint } = w.query(1);
const left: bigint = w.cancel(1) - remainingNs;
const results: BatchResult<number>[] = w.batch([
  { op: 'add', id: 2 },
  { op: 'refresh', id: 2, timeoutNs: 5n, addIfAbsent: true },
  { op: 'cancel', id: 2n },
]);
const failed: number[] = w.refreshIds(new BigUint64Array([1n, 2n]), { timeoutMs: 100 });
for (const e of w.dump({ chunk: 64 })) {
  const slot: number | null = e.slot;
  void slot;
}
w.on('expired', (events: ExpiredEvent<number>[]) => {
  for (const ev of events)
    console.log(ev.id + 1, ev.expiredNs - ev.deadlineNs);
});
w.on('error', (err: TwheelError) => console.log(err.code, err.errno, err.syscall));
w.touch(3);
w.touchAt(3, w.now());
const table: BigUint64Array | null = w.touchTable;
w.unref().ref();

const big = new Wheel({ timeoutNs: 1000000000n, bigint: true, clock: 'boottime' });
big.add(2n ** 64n - 1n);
const notRefreshed: bigint[] = big.refreshIds([1n, 2n]);
const bigIds: bigint[] = big.readEvents().map((ev) => ev.id);
const byType = new Wheel<bigint>({ timeoutMs: 1, bigint: true });
const numbers = new Wheel({ timeoutMs: 1, bigint: false });
const annotated: Wheel<bigint> = new Wheel({ timeoutMs: 1, bigint: true });
const numberIds: number[] = [...numbers.dump()].map((e) => e.id);
// An option known only at run time gives either kind of id.
const flag: boolean = process.argv.length > 2;
const either: Wheel<number | bigint> = new Wheel({ timeoutMs: 1, bigint: flag });
const someId: number | bigint | undefined = either.readEvents()[0]?.id;
const isWheel: boolean = (either as unknown) instanceof Wheel;
async function drain(): Promise<bigint> {
  for await (const ev of big)
    return ev.id;
  return 0n;
}

try {
  w.add(1);
} catch (err) {
  if ((err as TwheelError).code === 'EEXIST')
    console.log('live already', constants.TICK_MIN_NS, results.length, failed, left, table, drain,
      notRefreshed, bigIds, byType, numberIds, someId, annotated, isWheel);
}
w.close();
