async () => {
  function pick(obj: Record<string, unknown>, key: string): unknown
  function pick(obj: Record<string, unknown>, key: string, fallback: string): string
  function pick(obj: Record<string, unknown>, key: string, fallback?: string) {
    return obj[key] ?? fallback
  }

  const profile = await codemode.crm_get_contact({ id: 'c_102' })
  const city = pick(profile, 'city', 'unknown')
  return city
}
