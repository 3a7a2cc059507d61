// refused: namespace at 2
namespace Util {
  export const VERSION = '1.2.3';
  export function slug(s: string): string {
    return s.toLowerCase().replace(/[^a-z0-9]+/g, '-');
  }
}
return Util.slug((await codemode.cms_get_page({ id: 3 })).title);
