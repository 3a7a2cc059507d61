(): string => {
  const parts: string[] = ['corral', 'codemode', 'typescript'];
  return parts.map((p: string): string => p[0]!.toUpperCase() + p.slice(1)).join(' ');
}
