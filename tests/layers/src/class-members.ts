import ts from "typescript";

/**
 * The public members of an exported class as users see them in a built `.d.ts`: methods, getters,
 * setters, properties and static members, inherited ones included; protected ones count too (a subclass
 * author sees them), private ones and the constructor do not.
 */
export function publicMembers(declarationFile: string, className: string): string[] {
  const program = ts.createProgram([declarationFile], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    skipLibCheck: true,
  });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(declarationFile);
  const moduleSymbol = source === undefined ? undefined : checker.getSymbolAtLocation(source);
  if (moduleSymbol === undefined) throw new Error(`${declarationFile}: not a module`);
  const exported = checker.getExportsOfModule(moduleSymbol).find((symbol) => symbol.name === className);
  if (exported === undefined) throw new Error(`${declarationFile} exports no ${className}`);
  const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
  const declaration = symbol.valueDeclaration;
  if (declaration === undefined || !ts.isClassDeclaration(declaration)) {
    throw new Error(`${className} in ${declarationFile} is not a class`);
  }
  const instance = checker.getDeclaredTypeOfSymbol(symbol);
  const statics = checker.getTypeOfSymbolAtLocation(symbol, declaration);
  const names = new Set<string>();
  for (const [type, prefix] of [
    [instance, ""],
    [statics, "static "],
  ] as const) {
    for (const property of checker.getPropertiesOfType(type)) {
      if (prefix === "static " && property.name === "prototype") continue;
      if (property.name.startsWith("#") || property.name.startsWith("__#")) continue;
      const modifiers = ts.getCombinedModifierFlags(property.declarations?.[0] ?? declaration);
      if (modifiers & ts.ModifierFlags.Private) continue;
      names.add(`${prefix}${property.name}`);
    }
  }
  return [...names].sort();
}
