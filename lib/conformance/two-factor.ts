// placeholder: the suite lands here
export {}
