// The walks of a session (getTree, getBranch, getChildren, the context builders,
// methods and free functions) as plain data, the same for the reference and for
// ours: entry objects become their index in getEntries(), tree nodes get numbers
// in the order a depth-first walk meets them (the graph is walked with a visited
// set, so a node that two parents share, or a loop, is written down once).

/** Every operation on a session of these entries, as names. */
export function opsFor(entries) {
	const ids = [...new Set(entries.map((e) => e.id))];
	return [
		"tree",
		"context",
		"contextEntries",
		"projection",
		"free:context",
		"free:contextEntries",
		...ids.flatMap((id) => [`branch:${id}`, `children:${id}`, `free:context:${id}`, `free:contextEntries:${id}`]),
	];
}

/** The node graph under `roots`: { roots, nodes }, each node { entry, label, labelTimestamp, children }. */
export function treeGraph(roots, indexOf) {
	const numbers = new Map();
	const nodes = [];
	const number = (node) => {
		if (!numbers.has(node)) {
			numbers.set(node, nodes.length);
			nodes.push(node);
		}
		return numbers.get(node);
	};
	const rootNumbers = roots.map(number);
	const out = [];
	for (let i = 0; i < nodes.length; i++) {
		const node = nodes[i];
		out.push({
			entry: indexOf(node.entry),
			label: node.label,
			labelTimestamp: node.labelTimestamp,
			children: node.children.map(number),
		});
	}
	return { roots: rootNumbers, nodes: out };
}

function projection(p, indexOf) {
	return JSON.stringify({
		entries: p.entries.map((e) => ({ sourceEntry: indexOf(e.sourceEntry), messages: e.messages })),
		messages: p.messages,
		thinkingLevel: p.thinkingLevel,
		model: p.model,
	});
}

/** Runs one operation on `sm` (a SessionManager of `module`), as plain data. */
export function runOp(module, sm, op) {
	const entries = sm.getEntries();
	const index = new Map(entries.map((e, i) => [e, i]));
	const indexOf = (e) => (index.has(e) ? index.get(e) : -1);
	const [kind, ...rest] = op.split(":");
	const id = rest.join(":");
	switch (kind) {
		case "tree":
			return treeGraph(sm.getTree(), indexOf);
		case "context":
			return JSON.stringify(sm.buildSessionContext());
		case "contextEntries":
			return sm.buildContextEntries().map(indexOf);
		case "projection":
			return projection(sm.buildSessionProjection(), indexOf);
		case "branch":
			return sm.getBranch(id).map(indexOf);
		case "children":
			return sm.getChildren(id).map(indexOf);
		case "free": {
			const [what, ...leaf] = rest;
			const leafId = leaf.length ? leaf.join(":") : undefined;
			if (what === "context") return JSON.stringify(module.buildSessionContext(entries, leafId));
			return module.buildContextEntries(entries, leafId).map(indexOf);
		}
		default:
			throw new Error(`unknown op ${op}`);
	}
}

/**
 * The reference's graph made a tree by the rule this package follows: depth
 * first from the roots, each node kept where it is met first. Returns nested
 * { entry, label, labelTimestamp, children }.
 */
export function firstPlaces(graph) {
	const placed = new Set();
	const build = (n) => {
		const node = graph.nodes[n];
		const out = { entry: node.entry, label: node.label, labelTimestamp: node.labelTimestamp, children: [] };
		// Iterative would be needed for deep trees; these cases are small.
		for (const c of node.children) {
			if (placed.has(c)) continue;
			placed.add(c);
			out.children.push(build(c));
		}
		return out;
	};
	const roots = [];
	for (const r of graph.roots) {
		if (placed.has(r)) continue;
		placed.add(r);
		roots.push(build(r));
	}
	return roots;
}

/** Whether no node of the graph is met twice (so it is a tree as it is). */
export function isTree(graph) {
	const met = new Set();
	for (const n of [...graph.roots, ...graph.nodes.flatMap((node) => node.children)]) {
		if (met.has(n)) return false;
		met.add(n);
	}
	return true;
}
