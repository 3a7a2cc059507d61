async () => {
  abstract class Node2 {
    abstract readonly kind: 'file' | 'dir';
    isFile(): this is FileNode {
      return this.kind === 'file';
    }
    assertDir(): asserts this is DirNode {
      if (this.kind !== 'dir') throw new Error('not a directory');
    }
  }
  class FileNode extends Node2 {
    readonly kind = 'file' as const;
    constructor(readonly_size: number) {
      super();
      this.size = readonly_size;
    }
    size: number;
  }
  class DirNode extends Node2 {
    readonly kind = 'dir' as const;
    children: Node2[] = [];
  }

  const listing: { type: string; size?: number }[] = await codemode.fs_list_dir({ path: '.', details: true });
  const nodes: Node2[] = listing.map((e) => (e.type === 'file' ? new FileNode(e.size ?? 0) : new DirNode()));
  let bytes = 0;
  for (const n of nodes) if (n.isFile()) bytes += n.size;
  const root = new DirNode() as Node2;
  root.assertDir();
  root.children.push(...nodes);
  return { bytes, children: root.children.length };
}
