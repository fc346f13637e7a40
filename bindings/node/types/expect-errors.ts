// SPDX-License-Identifier: MIT
//
// What the declarations must refuse, one mistake per line: each line
// under a @ts-expect-error is an error, or tsc fails the directive as
// unused (make tsc). The id type follows the bigint option, in both
// directions, with or without a type argument.
import { Wheel } from 'twheel';

// @ts-expect-error: without { bigint: true } the ids are Numbers.
export const bigWithoutOption: Wheel<bigint> = new Wheel({ timeoutMs: 1 });
// @ts-expect-error: a type argument does not make Numbers BigInts.
export const bigByTypeOnly = new Wheel<bigint>({ timeoutMs: 1 });
// @ts-expect-error: { bigint: true } gives BigInts, not Numbers.
export const numberWithOption: Wheel<number> = new Wheel({ timeoutMs: 1, bigint: true });
// @ts-expect-error: nor with a type argument.
export const numberByType = new Wheel<number>({ timeoutMs: 1, bigint: true });
// @ts-expect-error: an id of a default wheel is a Number.
export const bigId: bigint = new Wheel({ timeoutMs: 1 }).readEvents()[0].id;
// @ts-expect-error: an id of a bigint wheel is a BigInt.
export const numberId: number = new Wheel({ timeoutMs: 1, bigint: true }).readEvents()[0].id;
// @ts-expect-error: an option known only at run time may give either.
export const unknownOption: Wheel<number> = new Wheel({ timeoutMs: 1, bigint: process.argv.length > 2 });
