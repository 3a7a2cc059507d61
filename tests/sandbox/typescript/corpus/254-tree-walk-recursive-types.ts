async () => {
  interface TreeNode {
    name: string;
    type: 'dir' | 'file';
    size?: number;
    children?: TreeNode[];
  }
  function walk(node: TreeNode, visit: (n: TreeNode, depth: number) => void, depth: number = 0): void {
    visit(node, depth);
    node.children?.forEach((c) => walk(c, visit, depth + 1));
  }
  function totalSize(node: TreeNode): number {
    return node.type === 'file' ? node.size ?? 0 : (node.children ?? []).reduce((s, c) => s + totalSize(c), 0);
  }
  const tree: TreeNode = await codemode.fs_tree({ path: 'src', depth: 4 });
  const lines: string[] = [];
  walk(tree, (n, d) => {
    if (n.type === 'dir') lines.push(`${'  '.repeat(d)}${n.name}/ (${totalSize(n)} B)`);
  });
  return lines.join('\n');
}
