// Timestamps come from the clock on both sides. A step that appends several entries must
// let the millisecond change between them: otherwise one side may put two entries in one
// millisecond and the other not, and "same timestamp" would differ for no real reason.

/** Busy-wait until Date.now() moves on. */
export function waitForNextMs() {
	const t = Date.now();
	while (Date.now() === t) {
		// spin
	}
}

/** Call each function in turn, one millisecond apart; returns their results. */
export function apart(...fns) {
	return fns.map((fn, i) => {
		if (i > 0) waitForNextMs();
		return fn();
	});
}
