declare const process: { env: Record<string, string | undefined> };
declare function structuredClone<T>(value: T): T;
declare class TextEncoder {
  encode(input?: string): Uint8Array;
}
declare let debugMode: boolean | undefined;
declare var globalThis: any;

const profile = await codemode.crm_get_contact({ id: 'c_7' });
const copy = structuredClone(profile);
copy.notes = undefined;
return copy;
