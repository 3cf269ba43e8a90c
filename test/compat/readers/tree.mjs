// The agents' tree (`getTree()` roots) as flat nodes, the same for both reader scripts: one node
// per entry in depth-first order, children as ids in the agent's own order, labels kept.
export function flatTree (roots) {
  const nodes = []
  const stack = [...roots].reverse()
  while (stack.length > 0) {
    const node = stack.pop()
    const item = { id: node.entry.id, children: node.children.map((c) => c.entry.id) }
    if (node.label !== undefined) item.label = node.label
    nodes.push(item)
    for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i])
  }
  return { roots: roots.map((r) => r.entry.id), nodes }
}
