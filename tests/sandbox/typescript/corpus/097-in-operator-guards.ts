async () => {
  type Cat = { meow(): string; lives: number };
  type Dog = { bark(): string; goodBoy: true };
  type Pet = Cat | Dog;

  const isCat = (p: Pet): p is Cat => 'meow' in p;
  const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

  const data: unknown = await codemode.kv_get({ key: 'pets' });
  if (!Array.isArray(data)) return 'not a list';
  const pets = data.filter(isRecord) as unknown as Pet[];
  const cats = pets.filter(isCat);
  const dogs = pets.filter((p): p is Dog => !isCat(p));
  return { cats: cats.length, dogs: dogs.length, lives: cats.reduce((n, c) => n + c.lives, 0) };
}
