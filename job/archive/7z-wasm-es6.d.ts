// 7-Zip's ES module build (the package types only its UMD build, whose `__dirname` an ES module
// bundle does not have): the same factory.
declare module '7z-wasm/7zz.es6.js' {
  const factory: import('7z-wasm').SevenZipModuleFactory;
  export default factory;
}
