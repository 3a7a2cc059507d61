async () => {
  type Sep = ' ' | ' ';
  const seps: Sep[] = [' ', ' '];
  type 𝒳 = { n: number };
  const 𝒴: 𝒳 = { n: 1 };
  const text: string = await codemode.fs_read_file({ path: 'notes.txt' });
  const parts = text.split(/[\u2028\u2029]/);
  return { parts: parts.length, seps: seps.length, n: 𝒴.n };
}
