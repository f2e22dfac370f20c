// Small seeded PRNG (mulberry32) with helpers. Same seed, same sequence, on every Node.

export function mulberry32(seed) {
	let a = seed >>> 0;
	return function next() {
		a = (a + 0x6d2b79f5) >>> 0;
		let t = a;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

export class Rng {
	constructor(seed) {
		this.seed = seed >>> 0;
		this.next = mulberry32(this.seed);
	}
	float() {
		return this.next();
	}
	int(n) {
		return Math.floor(this.next() * n);
	}
	bool(p = 0.5) {
		return this.next() < p;
	}
	pick(items) {
		return items[this.int(items.length)];
	}
	/** Pick from [[weight, value], ...]. */
	weighted(pairs) {
		const total = pairs.reduce((sum, [w]) => sum + w, 0);
		let r = this.next() * total;
		for (const [w, value] of pairs) {
			r -= w;
			if (r < 0) return value;
		}
		return pairs[pairs.length - 1][1];
	}
}

/** Seed from $SEED, else a random one. */
export function baseSeed() {
	const env = process.env.SEED;
	if (env !== undefined && env !== "") {
		const n = Number(env);
		if (!Number.isInteger(n)) throw new Error(`SEED must be an integer, got ${env}`);
		return n >>> 0;
	}
	return Math.floor(Math.random() * 2 ** 32) >>> 0;
}
