async () => {
  type Arrow = '→' | '⇒' | '\u2192';
  const arrow: Arrow = '→';
  const label: string = `naïve café ${arrow} 東京`;
  const emoji: '👍' | '👎' = (await codemode.vote_result({ poll: 42 })).up ? '👍' : '👎';
  const ℮: number = 2.718;
  const π: number = Math.PI;
  const ಠ_ಠ = (x: string): string => `${x} ಠ_ಠ`;
  return { label, emoji, e: ℮, pi: π, look: ಠ_ಠ('hm') };
}
