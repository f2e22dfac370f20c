// A full garbage collection between two operations, where the test runs with
// --expose-gc (the "release" pass of __test__/run.mjs): what a manager lets go of is
// then really gone before the next operation reads it. A WeakRef target read in the
// current job stays alive until the job ends, so the collection waits for the next
// turn of the event loop first.
export const GC_AVAILABLE = typeof globalThis.gc === "function";

export async function collectGarbage() {
	if (!GC_AVAILABLE) return;
	await new Promise((resolve) => setImmediate(resolve));
	globalThis.gc();
}
