#include "apptracer/signature.h"

#include <gtest/gtest.h>

namespace apptracer {
namespace {

using Types = std::vector<std::string>;

TEST(Signature, SplitsPlainParameters) {
  EXPECT_EQ(parameter_types("vector_add(float*, float const*, float const*, int)"),
            (Types{"float*", "float const*", "float const*", "int"}));
  EXPECT_EQ(parameter_types("empty()"), Types{});
  EXPECT_EQ(parameter_types("empty(void)"), Types{});
}

TEST(Signature, KeepsTemplatesNamespacesAndFunctionPointersWhole) {
  EXPECT_EQ(parameter_types("void at::native::(anonymous namespace)::kernel<float, 4>("
                            "at::native::Array<char*, 2>, int, void (*)(int, float), float&)"),
            (Types{"at::native::Array<char*, 2>", "int", "void (*)(int, float)", "float&"}));
  EXPECT_EQ(parameter_types("ns::f<(int)3>(ns::S<int[4]> const&, double* __restrict__)"),
            (Types{"ns::S<int[4]> const&", "double* __restrict__"}));
}

TEST(Signature, NamesWithoutParameterListsHaveNoTypes) {
  EXPECT_FALSE(parameter_types("vector_add").has_value());
  EXPECT_FALSE(parameter_types("triton_poi_fused_add_0").has_value());
  EXPECT_FALSE(parameter_types("").has_value());
}

TEST(Signature, ClassifiesPointers) {
  EXPECT_TRUE(is_data_pointer("float*"));
  EXPECT_TRUE(is_data_pointer("float* const"));
  EXPECT_TRUE(is_data_pointer("double* __restrict__"));
  EXPECT_FALSE(is_data_pointer("float&"));
  EXPECT_FALSE(is_data_pointer("void (*)(int)"));
  EXPECT_FALSE(is_data_pointer("at::native::Array<char*, 2>"));
  EXPECT_FALSE(is_data_pointer("int"));
}

TEST(Signature, ConstPointeesAreReadOnly) {
  EXPECT_TRUE(is_pointer_to_const("float const*"));
  EXPECT_TRUE(is_pointer_to_const("const float*"));
  EXPECT_TRUE(is_pointer_to_const("float const* __restrict__"));
  EXPECT_FALSE(is_pointer_to_const("float*"));
  EXPECT_FALSE(is_pointer_to_const("float* const")) << "the pointer is const, not the data";
  EXPECT_FALSE(is_pointer_to_const("const float**")) << "points to a mutable pointer";
  EXPECT_TRUE(is_pointer_to_const("float* const*"));
}

TEST(Signature, PointersToWritablePointersReachFurther) {
  EXPECT_TRUE(points_to_writable_pointers("char**"));
  EXPECT_TRUE(points_to_writable_pointers("float* const*"));
  EXPECT_TRUE(points_to_writable_pointers("void** __restrict__"));
  EXPECT_FALSE(points_to_writable_pointers("float const* const*")) << "reads only";
  EXPECT_FALSE(points_to_writable_pointers("const float**")) << "reads only";
  EXPECT_FALSE(points_to_writable_pointers("float*"));
  EXPECT_FALSE(points_to_writable_pointers("at::native::Array<char*, 2>")) << "by value: scanned";
}

TEST(Signature, ArithmeticTypesAreNeverPointers) {
  EXPECT_TRUE(is_arithmetic("unsigned long"));
  EXPECT_TRUE(is_arithmetic("int const"));
  EXPECT_FALSE(is_arithmetic("int*"));
  EXPECT_FALSE(is_arithmetic("at::native::Array<char*, 2>"));
}

}  // namespace
}  // namespace apptracer
